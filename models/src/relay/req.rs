//! The spawned REQ handler (handle_req): access checks that await and may fail, the claim that
//! registers under the lifecycle lock (registry, fan-out index, topic retain, commit), then the
//! historical query, its EVENTs and EOSE — or a rejection NOTICE + CLOSED.
//!
//! The handler runs inside a select! against its lease's cancellation: at each of its awaits,
//! a cancelled lease may win (the task is dropped), or — when the awaited future is ready at
//! the same time — the handler's branch may be polled first and carry on.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sim::{choose, yield_point};

use super::connection::{Entry, Lease, Shared};
use super::frame::{Frame, FrameKind, RelayEvent};

/// Whether access checks can fail in a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Every check passes.
    Ok,
    /// Each check passes, is refused, or fails with a database error (the strategy chooses).
    MayFail,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    Refused,
    DbError,
}

const STORED: [&str; 3] = ["stored#1", "stored#2", "stored#3"];

pub async fn handle_req(shared: Rc<Shared>, lease: Rc<Lease>, access: Access, stored: usize) {
    let verdict = check_access(access).await;
    if !cancellation_wins(&lease).await {
        match verdict {
            Verdict::Ok => {
                if claim(&shared, &lease).await {
                    deliver_history(&shared, &lease, stored).await;
                }
            }
            Verdict::Refused | Verdict::DbError => reject(&shared, &lease, verdict).await,
        }
    }
    shared.settle(&lease);
}

/// get_accessible_channel_ids_cached / is_member: a database round trip.
async fn check_access(access: Access) -> Verdict {
    yield_point("db: channel access").await;
    match access {
        Access::Ok => Verdict::Ok,
        Access::MayFail => match choose(3).await {
            0 => Verdict::Ok,
            1 => Verdict::Refused,
            _ => Verdict::DbError,
        },
    }
}

/// After an await: if the lease was cancelled meanwhile, select! picks the cancellation
/// branch (0) or, the awaited future being ready too, the handler's branch (1).
async fn cancellation_wins(lease: &Lease) -> bool {
    lease.is_cancelled() && choose(2).await == 0
}

/// claim_admitted_live / register_subscription_if_current: under the lifecycle lock, register
/// (registry, fan-out index), retain the topic, replace the old holder, and commit (cancel the
/// predecessors). False if the request may not claim.
async fn claim(shared: &Shared, lease: &Rc<Lease>) -> bool {
    let lifecycle = shared.lifecycle.lock().await;
    let s = &shared.state;
    let (sub, req) = (lease.sub, lease.req);
    if s.is_closed() {
        return false;
    }
    if shared.guards.token_at_admission {
        let owns = s.owner(sub) == Some(req);
        if !owns && shared.guards.live_claim_owner_check {
            return false;
        }
    } else {
        // The limit is checked here, over registered subscriptions only.
        let full = s
            .registry
            .with(|r| !r.contains_key(sub) && r.len() >= shared.limit);
        if full {
            let how = "refused at registration: too many subscriptions";
            shared.refuse_over_limit(lifecycle, sub, req, how).await;
            return false;
        }
    }
    let old = {
        let mut subs = s.subs.borrow_mut();
        let entry = subs.entry(sub).or_insert_with(|| Entry {
            owner: req,
            holder: None,
            pending: Vec::new(),
        });
        if !shared.guards.token_at_admission {
            // register-token: the token is taken now.
            entry.owner = req;
        }
        entry.holder.take()
    };
    shared.register(lease);
    shared.pubsub.retain_topic(lease.channel).await;
    if let Some(old) = old {
        shared.cancel(&old);
        shared.unregister(&old).await;
    }
    // pending.commit(): this request holds the id; older pending requests are cancelled.
    let predecessors: Vec<Rc<Lease>> = {
        let mut subs = s.subs.borrow_mut();
        let entry = subs
            .get_mut(sub)
            .expect("entry present under the lifecycle lock");
        entry.holder = Some(lease.clone());
        let (older, newer): (Vec<_>, Vec<_>) = entry.pending.drain(..).partition(|p| p.req <= req);
        entry.pending = newer;
        older
    };
    for p in predecessors.iter().filter(|p| p.req != req) {
        shared.cancel(p);
    }
    shared.emit(RelayEvent::TookEffect {
        sub,
        action: req,
        how: "committed: registered",
    });
    shared.settle(lease);
    true
}

/// The historical query, then its EVENTs and EOSE. The sends are synchronous (no await
/// between them): only the historical fence stops a cancelled or replaced request here.
async fn deliver_history(shared: &Shared, lease: &Lease, stored: usize) {
    yield_point("db: historical query").await;
    if cancellation_wins(lease).await {
        return;
    }
    let events = STORED[..stored].iter().map(|label| FrameKind::Event(label));
    for kind in events.chain([FrameKind::Eose]) {
        let frame = Frame {
            sub: lease.sub,
            kind,
            from: lease.req,
        };
        if shared.guards.historical_fence {
            if !shared.send_if_current(lease, frame).await {
                return;
            }
        } else {
            shared.send(frame).await;
        }
    }
}

/// A refusal after admission: NOTICE + CLOSED for a refused check, CLOSED for a database error.
async fn reject(shared: &Shared, lease: &Lease, verdict: Verdict) {
    let closed = |msg| Frame {
        sub: lease.sub,
        kind: FrameKind::Closed(msg),
        from: lease.req,
    };
    let frames = match verdict {
        Verdict::Refused => vec![
            Frame {
                sub: lease.sub,
                kind: FrameKind::Notice("restricted: not a member of this channel"),
                from: lease.req,
            },
            closed("restricted: not a member"),
        ],
        _ => vec![closed("error: could not check access")],
    };
    let g = shared.guards;
    if !g.token_at_admission {
        // Before the change: the refusal retires whatever holds the id, then queues directly.
        shared.close_if_owner(lease, &[]).await;
        for frame in frames {
            shared.send(frame).await;
        }
    } else if g.rejection_fence || verdict == Verdict::Refused {
        // send_req_rejection: owner check and queue insertion in one critical section.
        shared.close_if_owner(lease, &frames).await;
    } else {
        // The database-error branches queue CLOSED with conn.send, then clean up the token.
        for frame in frames {
            shared.send(frame).await;
        }
        shared.close_if_owner(lease, &[]).await;
    }
}
