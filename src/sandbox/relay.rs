//! A TCP relay between a replica and its source, so a test or the demo can stall one replication
//! link on demand.
//!
//! Why: a network that stalls — packets stop, the connection stays open — is where
//! `Seconds_Behind_Master` lies most. `MariaDB` keeps both threads `Yes`, says "Waiting for master
//! to send event" and reports 0 until `slave_net_timeout` (60 s by default) trips, while the
//! replica silently falls behind. No test can pull a cable; it can freeze a relay that holds the
//! connection open, which is what the replica sees on a stalled network: silence, not a
//! disconnect.
//!
//! Plain std threads and sockets: two pump threads per connection, each reading with a short
//! timeout so it notices a stall or shutdown promptly. A stalled pump simply stops reading, so
//! bytes wait in kernel buffers (or in the pump's buffer, for a chunk read just as the stall
//! began) and nothing is closed.

use std::collections::HashMap;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// How often idle threads look at the stall and stop flags. Bounds how late a resume or a drop
/// takes effect, at the cost of a few wake-ups per second per thread.
const POLL: Duration = Duration::from_millis(10);
/// A pump's read timeout: a blocked read is also woken by `shutdown` on drop, so this only bounds
/// how soon a pump notices the stop flag when nobody shuts its socket down.
const READ_TIMEOUT: Duration = Duration::from_millis(50);
/// Connecting to the target on 127.0.0.1 answers at once (accept or refuse); the bound only keeps
/// a drop from waiting on the acceptor if something odd happens.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
const BUFFER: usize = 64 * 1024;

/// A TCP relay on 127.0.0.1 forwarding every connection it accepts to one target port.
///
/// It lives in the process that started it: dropping it closes its listener and every relayed
/// connection (threads exit within a fraction of a second, never hang).
pub struct Relay {
    port: u16,
    target_port: u16,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

/// State shared by the owner, the acceptor and the pumps.
struct Shared {
    stalled: AtomicBool,
    stopping: AtomicBool,
    next_id: AtomicU64,
    /// Open connections, so a drop can shut their sockets down and wake blocked pumps.
    links: Mutex<HashMap<u64, Arc<Link>>>,
    /// Pump threads, joined on drop; finished ones are pruned as new connections arrive.
    pumps: Mutex<Vec<JoinHandle<()>>>,
}

/// One relayed connection: the accepted socket and the one opened to the target.
struct Link {
    id: u64,
    client: TcpStream,
    server: TcpStream,
    /// Pumps still running; the last to finish removes the link.
    running: AtomicU8,
}

impl Link {
    fn shutdown(&self) {
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.server.shutdown(Shutdown::Both);
    }
}

#[derive(Clone, Copy)]
enum Direction {
    ToServer,
    ToClient,
}

impl Relay {
    /// Listens on a free port of 127.0.0.1 and relays every connection to `127.0.0.1:target_port`.
    pub fn start(target_port: u16) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        // Non-blocking accept lets the acceptor notice a drop without a wake-up connection.
        listener.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            stalled: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            links: Mutex::new(HashMap::new()),
            pumps: Mutex::new(Vec::new()),
        });
        let target = SocketAddr::from((Ipv4Addr::LOCALHOST, target_port));
        let acceptor = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name(format!("relay-{port}"))
                .spawn(move || accept_loop(&listener, target, &shared))?
        };
        Ok(Self {
            port,
            target_port,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// The port the relay listens on (what a replica is pointed at).
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The port connections are forwarded to.
    #[must_use]
    pub fn target_port(&self) -> u16 {
        self.target_port
    }

    /// Stops forwarding in both directions, keeping every connection open: peers see silence.
    /// A chunk being written at this instant still completes; anything read afterwards is held.
    /// New connections are still accepted and connected to the target, but carry nothing either.
    pub fn stall(&self) {
        self.shared.stalled.store(true, Ordering::SeqCst);
    }

    /// Forwards again, held bytes first.
    pub fn resume(&self) {
        self.shared.stalled.store(false, Ordering::SeqCst);
    }

    #[must_use]
    pub fn is_stalled(&self) -> bool {
        self.shared.stalled.load(Ordering::SeqCst)
    }

    /// Relayed connections currently open (a stall must not change this).
    #[must_use]
    pub fn open_connections(&self) -> usize {
        lock(&self.shared.links).len()
    }
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("port", &self.port)
            .field("target_port", &self.target_port)
            .field("stalled", &self.is_stalled())
            .finish_non_exhaustive()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // The acceptor first, so no link appears after the sweep below.
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        for link in lock(&self.shared.links).values() {
            link.shutdown();
        }
        let pumps = std::mem::take(&mut *lock(&self.shared.pumps));
        for pump in pumps {
            let _ = pump.join();
        }
    }
}

/// A poisoned lock only means a pump panicked; the map and list stay usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn accept_loop(listener: &TcpListener, target: SocketAddr, shared: &Arc<Shared>) {
    while !shared.stopping.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => relay_connection(client, target, shared),
            // WouldBlock is the idle case; other errors (EMFILE, a peer that reset before the
            // accept) are transient for a relay: try again shortly.
            Err(_) => thread::sleep(POLL),
        }
    }
}

/// Connects the accepted socket to the target and starts its two pumps. A target that refuses
/// closes the accepted socket, which the client sees as the source being down.
fn relay_connection(client: TcpStream, target: SocketAddr, shared: &Arc<Shared>) {
    let Ok(server) = TcpStream::connect_timeout(&target, CONNECT_TIMEOUT) else {
        return;
    };
    if shared.stopping.load(Ordering::SeqCst) {
        return;
    }
    // Accepted sockets do not inherit non-blocking on Linux, but say so rather than rely on it.
    // Nagle off: the protocol is many small packets, and the relay must not add latency.
    let setup = [&client, &server].into_iter().try_for_each(|s| {
        s.set_nonblocking(false)?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(READ_TIMEOUT))
    });
    if setup.is_err() {
        return;
    }
    let id = shared.next_id.fetch_add(1, Ordering::SeqCst);
    let link = Arc::new(Link {
        id,
        client,
        server,
        running: AtomicU8::new(2),
    });
    lock(&shared.links).insert(id, Arc::clone(&link));
    let mut pumps = lock(&shared.pumps);
    pumps.retain(|p| !p.is_finished());
    for direction in [Direction::ToServer, Direction::ToClient] {
        let (pump_link, pump_shared) = (Arc::clone(&link), Arc::clone(shared));
        let spawned = thread::Builder::new()
            .name(format!("relay-pump-{id}"))
            .spawn(move || pump(&pump_link, direction, &pump_shared));
        if let Ok(handle) = spawned {
            pumps.push(handle);
        } else {
            // The other pump (if started) sees the shutdown and removes the link.
            link.shutdown();
            if link.running.fetch_sub(1, Ordering::SeqCst) == 1 {
                lock(&shared.links).remove(&id);
            }
        }
    }
}

/// Copies one direction of a link until EOF, an error, or the relay stops.
fn pump(link: &Link, direction: Direction, shared: &Shared) {
    let (mut from, mut to) = match direction {
        Direction::ToServer => (&link.client, &link.server),
        Direction::ToClient => (&link.server, &link.client),
    };
    let mut buf = vec![0u8; BUFFER];
    loop {
        if !wait_while_stalled(shared) {
            break;
        }
        let n = match from.read(&mut buf) {
            Ok(0) => {
                // Pass the half-close on; the other direction carries on until its own EOF.
                let _ = to.shutdown(Shutdown::Write);
                break;
            }
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => {
                link.shutdown();
                break;
            }
        };
        // A chunk read just as a stall began is held here, not sent, until resume.
        if !wait_while_stalled(shared) {
            break;
        }
        if to.write_all(&buf[..n]).is_err() {
            link.shutdown();
            break;
        }
    }
    if link.running.fetch_sub(1, Ordering::SeqCst) == 1 {
        lock(&shared.links).remove(&link.id);
    }
}

/// Waits out a stall; `false` when the relay is stopping.
fn wait_while_stalled(shared: &Shared) -> bool {
    loop {
        if shared.stopping.load(Ordering::SeqCst) {
            return false;
        }
        if !shared.stalled.load(Ordering::SeqCst) {
            return true;
        }
        thread::sleep(POLL);
    }
}
