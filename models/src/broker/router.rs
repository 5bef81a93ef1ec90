//! The router, run by each publisher: plan under the clients read lock (online or queue), then,
//! with that lock dropped, queue if behind() else try the bounded QoS1 lane.

use std::rc::Rc;

use sim::sync::{Sender, TrySendError};

use super::message::{BrokerEvent, Msg, MsgId, Route};
use super::{Shared, CLIENT};

pub struct Router {
    pub shared: Rc<Shared>,
    pub publisher: usize,
    pub messages: usize,
}

enum Plan {
    Online(Sender<Msg>),
    Queue,
}

impl Router {
    pub async fn run(self) {
        for seq in 1..=self.messages {
            let id = MsgId {
                publisher: self.publisher,
                seq,
            };
            self.shared.history.emit(BrokerEvent::Published { id });
            self.route(Msg {
                id,
                packet_id: None,
                dup: false,
            })
            .await;
        }
    }

    async fn route(&self, msg: Msg) {
        let plan = {
            let clients = self.shared.clients.read().await;
            match clients.get(CLIENT) {
                Some(session) => Plan::Online(session.lane.clone()),
                None => Plan::Queue,
            }
        };
        let route = match plan {
            Plan::Queue => {
                self.shared.queue.push_back(msg).await;
                Route::Offline
            }
            Plan::Online(lane) => {
                let behind = self.shared.queue.behind().await;
                // What is left of this publish depends only on the message and the answer, not
                // on which of behind()'s loads gave it.
                sim::checkpoint("behind", &(msg.id, behind));
                if behind {
                    self.shared.queue.push_back(msg).await;
                    Route::Behind
                } else if let Err(TrySendError::Full(msg)) = lane.try_send(msg).await {
                    self.shared.queue.hand_off(msg).await;
                    Route::HandOff
                } else {
                    Route::Lane
                }
            }
        };
        // What is left of this publish depends only on which message went which way.
        sim::checkpoint("routed", &(msg.id, route));
        self.shared.history.emit(BrokerEvent::Routed {
            id: msg.id,
            to: route,
        });
        sim::mark::enqueued(msg.id);
        // Whatever the plan, c's serve loop (if it runs yet) learns of new work: a publish planned
        // offline may land in the queue after bind() has drained it.
        self.shared.wake.notify_one().await;
    }
}
