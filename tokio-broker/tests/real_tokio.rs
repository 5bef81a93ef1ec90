//! The broker under real tokio: on a normal path every message reaches the client, re-sent
//! messages first, each publisher's in order.

use std::time::Duration;

use tokio_broker::real::broker::{self, Config, LaneWait, Variant, Workload};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn a_restarted_broker_delivers_every_message_in_order() {
    for variant in [Variant::UnboundBehind, Variant::BoundFirst] {
        let mut config = Config::new(variant);
        config.window = 2;
        config.lane_capacity = 2;
        let log = runtime().block_on(async {
            tokio::time::timeout(
                Duration::from_secs(10),
                broker::restart(config, Workload::new(3, 20, 2)),
            )
            .await
            .expect("every message delivered within 10 s")
        });
        let log = log.lock().unwrap();
        assert!(log.complete(), "{variant:?}: {log:?}");
        // 2 DUP resends, then 3 x 20 first deliveries.
        assert_eq!(log.wire.len(), 62, "{variant:?}");
        assert!(
            log.wire[0].dup && log.wire[1].dup,
            "{variant:?}: {:?}",
            &log.wire[..2]
        );
    }
}

#[test]
fn on_a_multi_threaded_runtime_with_lane_permits_too() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    for lane_wait in [
        LaneWait::TrySend,
        LaneWait::Reserve(Duration::from_millis(1)),
    ] {
        let mut config = Config::new(Variant::BoundFirst);
        config.lane_wait = lane_wait;
        let log = rt.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(10),
                broker::restart(config, Workload::new(4, 50, 1)),
            )
            .await
            .expect("every message delivered within 10 s")
        });
        let log = log.lock().unwrap();
        assert!(log.complete(), "{lane_wait:?}");
        assert_eq!(log.wire.len(), 201, "{lane_wait:?}");
    }
}
