//! The router, run by each publisher: plan under the clients read lock (online or queue),
//! then, with that lock dropped, queue if behind() else the bounded QoS1 lane; a full lane (or
//! a lane permit that does not come in time) falls back to the queue.

use super::rt::sync::mpsc::error::TrySendError;
use super::{rt, Broker, LaneWait, Msg, Route, SessionStore, CLIENT};

impl<S: SessionStore> Broker<S> {
    /// Routes one QoS1 publish for the client and wakes its serve loop.
    pub async fn route(&self, msg: Msg) -> Route {
        let lane = {
            let clients = self.clients.read().await;
            clients.get(CLIENT).map(|session| session.lane.clone())
        };
        let route = match lane {
            None => {
                self.queue.push_back(msg).await;
                Route::Offline
            }
            Some(_) if self.queue.behind() => {
                self.queue.push_back(msg).await;
                Route::Behind
            }
            Some(lane) => match self.config.lane_wait {
                LaneWait::TrySend => match lane.try_send(msg) {
                    Ok(()) => Route::Lane,
                    Err(TrySendError::Full(msg)) => {
                        self.queue.hand_off(msg).await;
                        Route::HandOff
                    }
                    Err(TrySendError::Closed(msg)) => {
                        self.queue.push_back(msg).await;
                        Route::Offline
                    }
                },
                LaneWait::Reserve(patience) => {
                    match rt::time::timeout(patience, lane.reserve()).await {
                        Ok(Ok(permit)) => {
                            permit.send(msg);
                            Route::Lane
                        }
                        Ok(Err(_closed)) => {
                            self.queue.push_back(msg).await;
                            Route::Offline
                        }
                        Err(_elapsed) => {
                            self.queue.hand_off(msg).await;
                            Route::HandOff
                        }
                    }
                }
            },
        };
        // Whatever the plan, the serve loop (if it runs yet) learns of new work.
        self.wake.notify_one();
        route
    }
}
