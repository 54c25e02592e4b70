//! Certificates for a sandbox started with TLS: a throwaway CA and a server certificate for
//! 127.0.0.1 (an IP address SAN, so `verify-identity` works against the sandbox), made with the
//! `openssl` command. Every node uses the same pair.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::error::SandboxError;

/// Where a TLS sandbox keeps its certificates.
#[must_use]
pub fn dir(sandbox: &Path) -> PathBuf {
    sandbox.join("tls")
}

/// The CA that signed the servers' certificate: what `ssl_ca` names.
#[must_use]
pub fn ca(sandbox: &Path) -> PathBuf {
    dir(sandbox).join("ca.pem")
}

/// Lines for a node's option file.
#[must_use]
pub fn cnf_lines(sandbox: &Path) -> String {
    let d = dir(sandbox);
    format!(
        "ssl_ca={}\nssl_cert={}\nssl_key={}\n",
        d.join("ca.pem").display(),
        d.join("server.pem").display(),
        d.join("server.key").display()
    )
}

/// Makes the CA and the server certificate, unless they exist.
pub fn make(sandbox: &Path) -> Result<(), SandboxError> {
    let d = dir(sandbox);
    if d.join("server.pem").exists() {
        return Ok(());
    }
    std::fs::create_dir_all(&d)
        .map_err(|e| SandboxError::io(format!("creating {}", d.display()), e))?;
    let ext = d.join("server.ext");
    std::fs::write(
        &ext,
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .map_err(|e| SandboxError::io(format!("writing {}", ext.display()), e))?;
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let steps: [Vec<&str>; 3] = [
        [
            &["req", "-x509"][..],
            &ec,
            &["-keyout", "ca.key", "-out", "ca.pem", "-days", "3650"],
        ]
        .concat()
        .into_iter()
        .chain(["-subj", "/CN=rwtop sandbox CA"])
        .collect(),
        [
            &["req"][..],
            &ec,
            &["-keyout", "server.key", "-out", "server.csr"],
        ]
        .concat()
        .into_iter()
        .chain(["-subj", "/CN=127.0.0.1"])
        .collect(),
        vec![
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "3650",
            "-extfile",
            "server.ext",
        ],
    ];
    for args in steps {
        let out = Command::new("openssl")
            .args(&args)
            .env_remove(crate::config::PASSWORD_ENV_VAR)
            .current_dir(&d)
            .output()
            .map_err(|e| {
                SandboxError::io(
                    "running openssl to make the sandbox's TLS certificates (install the \
                     openssl package)"
                        .to_owned(),
                    e,
                )
            })?;
        if !out.status.success() {
            return Err(SandboxError::io(
                format!("openssl {}", args.join(" ")),
                std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_owned()),
            ));
        }
    }
    Ok(())
}
