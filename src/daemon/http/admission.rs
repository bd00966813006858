//! Who holds the network face's connection slots, so that no flood of connections locks
//! a token holder out (docs/remote.md "Limits", SECURITY.md "Floods and stalls").
//!
//! Whether a connection belongs to a token holder is known only per request (HTTP/2
//! carries many on one connection), so every connection starts **unauthenticated** and
//! becomes **authenticated** at its first request that carries the token (any request
//! but `/health` when the daemon has none: its connections are its own user's, checked
//! in mod.rs). The two kinds are counted apart:
//! - authenticated connections have [`MAX_AUTHENTICATED`] slots of their own, which no
//!   connection without the token can take;
//! - unauthenticated ones (a connection that has not yet sent its first request, a
//!   `/health` poller, a client without the token) share [`MAX_UNAUTHENTICATED`] slots,
//!   at most [`MAX_UNAUTHENTICATED_PER_PEER`] of them per peer. A new connection is never
//!   turned away: when its peer already holds its share, one of that peer's own
//!   connections makes room; when the pool is full, one of the peer holding the most.
//!   The one that goes is the oldest that has been answered without the token (a
//!   prober, a poller), else the oldest that has had [`GRACE`] to send its first
//!   request and has not. A connection younger than that may be a token holder's that
//!   is about to send its request (a client opening many at once): it is not displaced
//!   to keep the caps, only to keep [`MAX_UNAUTHENTICATED_BURST`], the bound on
//!   descriptors (then the oldest of the largest peer goes).
//!   So a flood from one address only ever displaces itself, and a token holder's new
//!   connection lives until it has sent its request unless a flood opens a thousand
//!   more within that moment.
//!
//! A peer is the client's IP address; an IPv6 one is taken by its /64 (one host is
//! usually given a whole /64, and could otherwise flood from as many addresses). All
//! loopback clients of one address are one peer: on a daemon without a token only its
//! own user may connect at all (mod.rs), so other users' floods are cut there.
//!
//! Descriptors stay bounded: at most `MAX_AUTHENTICATED + MAX_UNAUTHENTICATED_BURST`
//! served (the burst bound lowered to fit the process's descriptor limit), plus
//! displaced ones in the moment of closing.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Slots reserved for connections that have carried the token.
pub const MAX_AUTHENTICATED: usize = 512;
/// Slots shared by connections that have not (yet).
pub const MAX_UNAUTHENTICATED: usize = 128;
/// Unauthenticated slots one peer may hold.
pub const MAX_UNAUTHENTICATED_PER_PEER: usize = 32;
/// How long a new connection has to send its first request before it counts against
/// the caps above: a token holder's sends it at once.
pub const GRACE: Duration = Duration::from_secs(2);
/// Unauthenticated connections held at most, however young, where the descriptor limit
/// allows; see [`burst_bound`].
pub const MAX_UNAUTHENTICATED_BURST: usize = 1024;
/// Descriptors left for everything else (jobs' pipes and terminals, the unix socket's
/// clients) when the burst bound is taken from the descriptor limit.
const OTHER_DESCRIPTORS: usize = 256;

const UNAUTHENTICATED: u8 = 0;
const AUTHENTICATED: u8 = 1;
const GONE: u8 = 2;

/// The table of every served connection.
pub struct Admission {
    table: Mutex<Table>,
    /// Unauthenticated connections held at most ([`burst_bound`]).
    burst: usize,
}

impl Default for Admission {
    fn default() -> Self {
        Admission {
            table: Mutex::default(),
            burst: burst_bound(),
        }
    }
}

/// [`MAX_UNAUTHENTICATED_BURST`], less what the process's descriptor limit (its soft
/// `RLIMIT_NOFILE`, often 1024) cannot hold beside the authenticated slots and
/// [`OTHER_DESCRIPTORS`]; never under [`MAX_UNAUTHENTICATED`]. Were the limit reached,
/// `accept` would fail for every client alike, token holders too.
fn burst_bound() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(usize::MAX);
    limit
        .saturating_sub(MAX_AUTHENTICATED + OTHER_DESCRIPTORS)
        .clamp(MAX_UNAUTHENTICATED, MAX_UNAUTHENTICATED_BURST)
}

#[derive(Default)]
struct Table {
    next_id: u64,
    /// Unauthenticated connections by id, so by age (ids only grow).
    unauthenticated: BTreeMap<u64, Arc<Ticket>>,
    per_peer: HashMap<Peer, usize>,
    authenticated: usize,
}

/// A peer as the caps count it: an IPv4 address, or an IPv6 address's /64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Peer(u128);

impl Peer {
    pub fn of(ip: IpAddr) -> Self {
        match ip.to_canonical() {
            IpAddr::V4(v4) => Peer(u128::from(u32::from(v4))),
            // Tagged above every IPv4 value, so the two never meet.
            IpAddr::V6(v6) => Peer((u128::from(v6) & !((1u128 << 64) - 1)) | 1 << 32),
        }
    }
}

/// A connection's slot: given back when dropped (the connection ended).
pub struct Slot {
    admission: Arc<Admission>,
    ticket: Arc<Ticket>,
}

/// A connection's entry in the table.
struct Ticket {
    id: u64,
    peer: Peer,
    /// Since when it may send its first request: admitted, or through the owner check.
    born: Mutex<Instant>,
    state: AtomicU8,
    /// A request on it was answered without the token: the first to go when room is needed.
    refused: std::sync::atomic::AtomicBool,
    /// Told when the connection must close at once to make room.
    displaced: Notify,
}

impl Ticket {
    fn age(&self) -> Duration {
        self.born.lock().unwrap_or_else(|p| p.into_inner()).elapsed()
    }
}

impl Admission {
    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding the lock leaves counts that are still whole numbers: go on.
        self.table.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A slot for a new connection from `ip`, made by displacing another unauthenticated
    /// connection when needed (see the module's rules).
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Slot {
        self.admit_born(ip, Instant::now())
    }

    fn admit_born(self: &Arc<Self>, ip: IpAddr, born: Instant) -> Slot {
        let peer = Peer::of(ip);
        let mut table = self.lock();
        let held = table.per_peer.get(&peer).copied().unwrap_or(0);
        let largest = table.largest_peer();
        let victim = if held >= MAX_UNAUTHENTICATED_PER_PEER {
            table.victim(Some(peer), false)
        } else if table.unauthenticated.len() >= MAX_UNAUTHENTICATED {
            table.victim(largest, false).or_else(|| table.victim(None, false))
        } else {
            None
        };
        let victim = match victim {
            None if table.unauthenticated.len() >= self.burst => table.victim(largest, true),
            victim => victim,
        };
        if let Some(id) = victim {
            table.displace(id);
        }
        table.next_id += 1;
        let ticket = Arc::new(Ticket {
            id: table.next_id,
            peer,
            born: Mutex::new(born),
            state: AtomicU8::new(UNAUTHENTICATED),
            refused: Default::default(),
            displaced: Notify::new(),
        });
        table.unauthenticated.insert(ticket.id, ticket.clone());
        *table.per_peer.entry(peer).or_default() += 1;
        Slot {
            admission: self.clone(),
            ticket,
        }
    }

    /// How many connections of each kind are held: (authenticated, unauthenticated).
    #[cfg(test)]
    pub fn counts(&self) -> (usize, usize) {
        let table = self.lock();
        (table.authenticated, table.unauthenticated.len())
    }
}

impl Table {
    /// The peer holding the most unauthenticated slots.
    fn largest_peer(&self) -> Option<Peer> {
        self.per_peer
            .iter()
            .max_by_key(|(_, held)| **held)
            .map(|(peer, _)| *peer)
    }

    /// The connection to displace among `peer`'s (all unauthenticated ones for
    /// `None`): the oldest refused a request, else the oldest past its [`GRACE`], else,
    /// when `even_young`, the oldest.
    fn victim(&self, peer: Option<Peer>, even_young: bool) -> Option<u64> {
        let candidates = || {
            self.unauthenticated
                .values()
                .filter(move |t| peer.is_none_or(|p| t.peer == p))
        };
        candidates()
            .find(|t| t.refused.load(Ordering::Relaxed))
            .or_else(|| candidates().find(|t| t.age() >= GRACE))
            .or_else(|| candidates().next().filter(|_| even_young))
            .map(|t| t.id)
    }

    /// Takes a connection out of the table and tells it to close.
    fn displace(&mut self, id: u64) {
        if let Some(ticket) = self.remove_unauthenticated(id) {
            ticket.state.store(GONE, Ordering::Release);
            ticket.displaced.notify_one();
        }
    }

    fn remove_unauthenticated(&mut self, id: u64) -> Option<Arc<Ticket>> {
        let ticket = self.unauthenticated.remove(&id)?;
        if let Some(held) = self.per_peer.get_mut(&ticket.peer) {
            *held -= 1;
            if *held == 0 {
                self.per_peer.remove(&ticket.peer);
            }
        }
        Some(ticket)
    }
}

impl Slot {
    /// Moves the connection to the authenticated slots (it carried the token); false
    /// when they are all taken (it goes on being served, as an unauthenticated one) or
    /// it was displaced meanwhile.
    pub fn authenticate(&self) -> bool {
        let state = &self.ticket.state;
        match state.load(Ordering::Acquire) {
            AUTHENTICATED => return true,
            GONE => return false,
            _ => {}
        }
        let mut table = self.admission.lock();
        // Looked at again under the lock: a displacement may have come between.
        if state.load(Ordering::Acquire) != UNAUTHENTICATED || table.authenticated >= MAX_AUTHENTICATED {
            return state.load(Ordering::Acquire) == AUTHENTICATED;
        }
        table.remove_unauthenticated(self.ticket.id);
        table.authenticated += 1;
        state.store(AUTHENTICATED, Ordering::Release);
        true
    }

    pub fn is_authenticated(&self) -> bool {
        self.ticket.state.load(Ordering::Acquire) == AUTHENTICATED
    }

    /// The connection is served from now on (the owner check of a daemon without a
    /// token, which may take a while under load, is behind it): its [`GRACE`] starts.
    pub fn serving(&self) {
        *self.ticket.born.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    /// A request on this connection was answered without the token.
    pub fn mark_refused(&self) {
        self.ticket.refused.store(true, Ordering::Relaxed);
    }

    /// Resolves when the connection must close to make room for another.
    pub async fn displaced(&self) {
        self.ticket.displaced.notified().await
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut table = self.admission.lock();
        match self.ticket.state.swap(GONE, Ordering::AcqRel) {
            UNAUTHENTICATED => {
                table.remove_unauthenticated(self.ticket.id);
            }
            AUTHENTICATED => table.authenticated -= 1,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn past_grace() -> Instant {
        Instant::now() - GRACE - Duration::from_secs(1)
    }

    fn gone(slot: &Slot) -> bool {
        slot.ticket.state.load(Ordering::Acquire) == GONE
    }

    #[test]
    fn a_flood_from_one_peer_displaces_only_itself() {
        let admission = Arc::new(Admission::default());
        let flood: Vec<_> = (0..MAX_UNAUTHENTICATED_PER_PEER)
            .map(|_| admission.admit_born(ip("10.0.0.1"), past_grace()))
            .collect();
        let other = admission.admit(ip("10.0.0.2"));
        let more = admission.admit(ip("10.0.0.1"));
        // The flood's oldest made room for its newest; the other peer's stays.
        assert!(gone(&flood[0]) && !gone(&flood[1]));
        assert!(other.authenticate());
        assert_eq!(admission.counts(), (1, MAX_UNAUTHENTICATED_PER_PEER));
        drop(more);
        drop(other);
        assert_eq!(admission.counts(), (0, MAX_UNAUTHENTICATED_PER_PEER - 1));
    }

    #[test]
    fn young_connections_are_displaced_only_past_the_burst_bound() {
        let admission = Arc::new(Admission::default());
        let burst: Vec<_> = (0..admission.burst).map(|_| admission.admit(ip("10.0.0.1"))).collect();
        assert!(burst.iter().all(|slot| !gone(slot)));
        let _next = admission.admit(ip("10.0.0.1"));
        assert!(gone(&burst[0]) && !gone(&burst[1]));
        assert_eq!(admission.counts(), (0, admission.burst));
    }

    #[test]
    fn a_full_pool_gives_up_a_slot_of_its_largest_peer_refused_ones_first() {
        let admission = Arc::new(Admission::default());
        let mut held = Vec::new();
        for i in 0..MAX_UNAUTHENTICATED {
            // Peer 0 holds the most (its whole share), peers 1 to 4 the rest.
            let peer = if i < MAX_UNAUTHENTICATED_PER_PEER { 0 } else { 1 + i % 4 };
            held.push(admission.admit_born(ip(&format!("10.0.{peer}.1")), past_grace()));
        }
        held[7].mark_refused();
        let fresh = admission.admit(ip("10.9.9.9"));
        assert_eq!(admission.counts(), (0, MAX_UNAUTHENTICATED));
        let displaced: Vec<_> = (0..held.len()).filter(|i| gone(&held[*i])).collect();
        assert_eq!(displaced, [7], "the largest peer's refused connection goes first");
        let _another = admission.admit(ip("10.9.9.8"));
        let displaced: Vec<_> = (0..held.len()).filter(|i| gone(&held[*i])).collect();
        assert_eq!(displaced, [0, 7], "then its oldest");
        assert!(!gone(&fresh));
    }

    #[test]
    fn ipv6_peers_are_counted_by_their_64() {
        assert_eq!(Peer::of(ip("2001:db8::1")), Peer::of(ip("2001:db8::ffff:1")));
        assert_ne!(Peer::of(ip("2001:db8::1")), Peer::of(ip("2001:db8:0:1::1")));
        assert_eq!(Peer::of(ip("::ffff:127.0.0.1")), Peer::of(ip("127.0.0.1")));
    }
}
