//! TLS to real servers: a sandbox whose servers offer TLS with their own CA, reached with every
//! `ssl_mode`, and a sandbox without TLS, which `preferred` talks to in plain text and
//! `required` refuses with a message saying what to change.

mod common;

use std::path::PathBuf;

use common::{TestSandbox, rwtop};
use rwtop::mysql::{Endpoint, NodeConn, SqlError, Timeouts, Tls, TlsMode};

fn endpoint(t: &TestSandbox, host: &str, mode: TlsMode, ca: Option<PathBuf>) -> Endpoint {
    Endpoint {
        host: host.to_owned(),
        tls: Tls { mode, ca },
        ..t.sandbox().endpoint("primary").unwrap()
    }
}

/// The session's cipher: empty over plain TCP. The server must answer with the row and its
/// value, so that "plain" is what the server said, not what a missing row defaulted to.
async fn cipher(conn: &mut NodeConn) -> String {
    let rows = conn
        .query_rows("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        .await
        .unwrap();
    let [row] = rows.as_slice() else {
        panic!("one Ssl_cipher row, got {rows:?}");
    };
    assert_eq!(
        row.text(&["Variable_name"]).unwrap(),
        Some("Ssl_cipher"),
        "{row:?}"
    );
    row.text(&["Value"])
        .unwrap()
        .unwrap_or_else(|| panic!("Ssl_cipher is NULL: {row:?}"))
        .to_owned()
}

async fn connect(endpoint: &Endpoint) -> Result<NodeConn, SqlError> {
    NodeConn::connect(endpoint, Timeouts::default()).await
}

#[tokio::test]
async fn every_ssl_mode_against_servers_that_offer_tls() {
    let t = TestSandbox::start_with_tls(1);
    let ca = rwtop::sandbox::tls::ca(t.sandbox().dir());
    for mode in [
        TlsMode::Preferred,
        TlsMode::Required,
        TlsMode::VerifyCa,
        TlsMode::VerifyIdentity,
    ] {
        let mut conn = connect(&endpoint(&t, "127.0.0.1", mode, Some(ca.clone())))
            .await
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert!(!cipher(&mut conn).await.is_empty(), "{mode} encrypts");
        conn.close().await;
    }
    let mut plain = connect(&endpoint(&t, "127.0.0.1", TlsMode::Disabled, None))
        .await
        .unwrap();
    assert_eq!(cipher(&mut plain).await, "", "disabled stays plain");

    // The certificate names 127.0.0.1 only, so verify-identity refuses "localhost".
    let err = connect(&endpoint(
        &t,
        "localhost",
        TlsMode::VerifyIdentity,
        Some(ca.clone()),
    ))
    .await
    .err()
    .expect("the certificate does not name localhost");
    let text = err.to_string();
    assert!(
        text.contains("localhost") && text.contains("ssl_mode verify-identity"),
        "{text}"
    );
    // verify-ca should skip that name check, but mysql_async 0.37.1 recognises the name error
    // by the text "NotValidForName", which rustls 0.23 now words differently: verify-ca checks
    // the name too (stricter, never weaker). Documented in docs/guide/security.md, "TLS"; when the
    // driver is fixed this fails and that note goes.
    let err = connect(&endpoint(
        &t,
        "localhost",
        TlsMode::VerifyCa,
        Some(ca.clone()),
    ))
    .await
    .err()
    .expect("verify-ca also checks the name with this driver");
    assert!(err.to_string().contains("not valid for name"), "{err}");

    // A CA that did not sign the server's certificate.
    let other = tempfile::tempdir().unwrap();
    rwtop::sandbox::tls::make(other.path()).unwrap();
    let wrong = rwtop::sandbox::tls::ca(other.path());
    let err = connect(&endpoint(
        &t,
        "127.0.0.1",
        TlsMode::VerifyCa,
        Some(wrong.clone()),
    ))
    .await
    .err()
    .expect("a foreign CA is refused");
    let text = err.to_string();
    assert!(
        text.contains("certificate") && text.contains(&wrong.display().to_string()),
        "{text}"
    );
}

#[tokio::test]
async fn preferred_falls_back_and_required_refuses_without_tls() {
    let t = TestSandbox::start(1, false);
    let mut conn = connect(&endpoint(&t, "127.0.0.1", TlsMode::Preferred, None))
        .await
        .expect("preferred talks plain text to a server without TLS");
    assert_eq!(cipher(&mut conn).await, "");
    let err = connect(&endpoint(&t, "127.0.0.1", TlsMode::Required, None))
        .await
        .err()
        .expect("required refuses plain text");
    let text = err.to_string();
    assert!(
        text.contains("does not offer TLS") && text.contains("ssl_mode is required"),
        "{text}"
    );
}

#[test]
fn the_sandbox_config_of_a_tls_sandbox_verifies_the_identity() {
    let t = TestSandbox::start_with_tls(1);
    let config = rwtop::config::Config::load(&rwtop::config::CliOverrides {
        config: Some(t.sandbox().dir().join("rwtop.toml")),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(config.settings.tls.mode, TlsMode::VerifyIdentity);
    assert!(
        config
            .nodes
            .iter()
            .all(|n| n.endpoint.tls == config.settings.tls)
    );
    let config = t.sandbox().dir().join("rwtop.toml");
    let out = rwtop(
        &[
            "--config",
            config.to_str().unwrap(),
            "snapshot",
            "--json",
            "--duration",
            "2s",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["state"] == "up"),
        "{doc:#}"
    );
}
