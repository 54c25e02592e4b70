//! Which ports a new sandbox's servers listen on.

use std::net::TcpListener;

use super::SandboxError;

/// Where a new sandbox's ports come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ports {
    /// Consecutive ports from this one: primary, r1, r2, ...
    Base(u16),
    /// Whatever the kernel hands out, for tests running side by side.
    Free,
}

/// `count` ports, the primary's first. Free ones are held all at once while chosen, so none
/// repeats; a server may still lose one to another program before it binds it.
pub(super) fn choose_ports(ports: &Ports, count: usize) -> Result<Vec<u16>, SandboxError> {
    match ports {
        Ports::Base(base) => (0..count)
            .map(|i| {
                u16::try_from(i)
                    .ok()
                    .and_then(|i| base.checked_add(i))
                    .ok_or(SandboxError::PortTaken {
                        port: *base,
                        node: format!("node {i} (port range overflows 65535)"),
                    })
            })
            .collect(),
        Ports::Free => {
            // Hold all listeners until every port is chosen so none repeats.
            let listeners: Vec<TcpListener> = (0..count)
                .map(|_| TcpListener::bind(("127.0.0.1", 0)))
                .collect::<Result<_, _>>()
                .map_err(|e| SandboxError::io("finding free ports".to_owned(), e))?;
            listeners
                .iter()
                .map(|l| {
                    l.local_addr()
                        .map(|a| a.port())
                        .map_err(|e| SandboxError::io("finding free ports".to_owned(), e))
                })
                .collect()
        }
    }
}
