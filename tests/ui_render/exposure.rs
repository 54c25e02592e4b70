//! The failover exposure pane over a recorded healthy topology with r1 lacking 50 transactions:
//! a row per replica under the primary, the candidate with its reason, and the title once the
//! primary no longer answers.

use insta::assert_snapshot;
use rwtop::ui::panels;

use super::{Cover, UiState, assert_has, draw, recorded, screen_text, selecting};

#[test]
fn exposure_pane_shows_each_replica_and_the_candidate() {
    let mut snapshot = recorded("healthy");
    for node in &mut snapshot.nodes {
        if node.name == "r1"
            && let Some(r) = node.replica_mut()
        {
            r.gtid_backlog.not_received = Some(50);
        }
    }
    snapshot.exposure = rwtop::alerts::exposure::judge(&snapshot);
    let mut state: UiState = selecting(&snapshot, "r1");
    state.panes.cover = Some(Cover::Exposure);
    let backend = draw(&snapshot, &state, panels::exposure::render, 100, 12);
    assert_snapshot!("panel_exposure_r1_lacks_50_100x12", &backend);
    let text = screen_text(&backend);
    assert_has(
        &text,
        &[
            "failover exposure · primary answers",
            "not recv",
            "candidate r2: loses 0 trx · lacks least: 0 trx against 50 on r1",
        ],
    );
    // The primary gone: the same figures, as of its last sample.
    for c in &mut snapshot.exposure {
        c.root_answers = false;
        c.root_sample_age = Some(std::time::Duration::from_secs(12));
    }
    let backend = draw(&snapshot, &state, panels::exposure::render, 100, 12);
    assert_has(
        &screen_text(&backend),
        &["primary NOT ANSWERING: as lost at its last sample, 12s ago"],
    );
}
