//! The selected replica's waiting DDL and who blocks it, under its errors: `waits for table
//! metadata lock, blocked by #1234 app@10.0.0.5, idle 1m35s … : KILL 1234`, then what shows it
//! (the lock, or that it is a suspect) and its last statement, each wrapped; `K` offers the kill.

use ratatui::text::Line;

use super::wrap::{Token, words, wrap};
use crate::store::NodeView;
use crate::ui::Theme;

pub(super) fn lines(node: &NodeView, t: &Theme, width: usize, indent: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for ddl in node.ddl() {
        let (Some(lock), Some(blockers)) = (&ddl.waiting_for, &ddl.blockers) else {
            continue;
        };
        let mut tokens = vec![Token::new("DDL".to_owned(), t.warning)];
        tokens.extend(words(
            &format!("waits for {lock}, {}", blockers.summary()),
            t.warning,
        ));
        out.extend(wrap(tokens, width, indent));
        for holder in blockers.holders.iter().take(1) {
            out.extend(wrap(words(&holder.evidence(), t.muted), width, indent));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testkit::scan;
    use crate::store::testkit::{Topo, blocked_ddl};

    #[test]
    fn a_waiting_ddl_names_its_blocker_and_the_kill() {
        let mut topo = Topo::new();
        topo.node_mut("r1", |n| {
            *scan(n) = vec![blocked_ddl("ALTER TABLE t FORCE", 95, true)];
        });
        let node = topo.snapshot.node("r1").unwrap();
        let text: Vec<String> = lines(node, &Theme::builtin(), 200, 2)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            text[0],
            "DDL waits for table metadata lock, blocked by #1234 app@10.0.0.5, idle 1m35s in a \
             transaction open 1m37s: KILL 1234"
        );
        assert!(text[1].starts_with("holds MDL_SHARED_READ on shop.t; its last statement"));
        topo.node_mut("r1", |n| scan(n)[0].blockers = None);
        let node = topo.snapshot.node("r1").unwrap();
        assert!(lines(node, &Theme::builtin(), 200, 2).is_empty());
    }
}
