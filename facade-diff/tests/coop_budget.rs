//! tokio's cooperative budget (and its timers' deadlines), the facade against the real thing:
//! each program is written once over `rt` and run on tokio's current-thread runtime and under
//! braid (every schedule of a sample); it returns what the budget decided (how many operations
//! one poll made, whether budget was left), which must be the same on both.

/// The programs, once over each runtime.
macro_rules! programs {
    ($($side:ident: [$($rt:tt)+];)*) => {$(
        mod $side {
            use std::cell::Cell;
            use $($rt)+ as rt;

            /// A biased `select!` around a loop whose receives are always ready: the loop runs
            /// until the budget ends its poll; the yield wins at the select's second poll.
            pub async fn busy_loop_in_select() -> u32 {
                let (tx, mut rx) = rt::sync::mpsc::unbounded_channel();
                let received = Cell::new(0);
                rt::select! {
                    biased;
                    _ = async {
                        loop {
                            tx.send(()).unwrap();
                            rx.recv().await.unwrap();
                            received.set(received.get() + 1);
                        }
                    } => unreachable!(),
                    _ = rt::task::yield_now() => {}
                }
                received.get()
            }

            /// Budget units one poll has: `consume_budget` until none is left.
            pub async fn units_in_a_poll() -> u32 {
                let mut units = 0;
                while rt::task::coop::has_budget_remaining() {
                    rt::task::coop::consume_budget().await;
                    units += 1;
                }
                units
            }

            /// `unconstrained` spends nothing: a loop of 300 ready receives inside it, then
            /// the poll's units as before.
            pub async fn unconstrained_spends_nothing() -> u32 {
                let (tx, mut rx) = rt::sync::mpsc::unbounded_channel();
                rt::task::coop::unconstrained(async {
                    for _ in 0..300 {
                        tx.send(()).unwrap();
                        rx.recv().await.unwrap();
                    }
                })
                .await;
                units_in_a_poll().await
            }

            /// A receive that finds nothing gives its unit back: 300 empty `try`s through
            /// `poll_recv` in one poll, then the poll's units.
            pub async fn pending_gives_back() -> u32 {
                let (_tx, mut rx) = rt::sync::mpsc::unbounded_channel::<()>();
                for _ in 0..300 {
                    let polled = std::future::poll_fn(|cx| {
                        std::task::Poll::Ready(rx.poll_recv(cx).is_pending())
                    })
                    .await;
                    assert!(polled);
                }
                units_in_a_poll().await
            }

            /// A set of 200 finished tasks joined in a loop: the budget ends polls on the way,
            /// and every task is joined.
            pub async fn join_set_drains() -> u32 {
                let mut set = rt::task::JoinSet::new();
                for i in 0..200u32 {
                    set.spawn(async move { i });
                }
                let mut sum = 0;
                while let Some(v) = set.join_next().await {
                    sum += v.unwrap();
                }
                sum
            }

            /// Handles of finished tasks awaited one after another in one poll: each takes a
            /// unit, so the 129th waits for the next poll; all 200 are joined.
            pub async fn join_handles_in_a_row() -> u32 {
                let handles: Vec<_> = (0..200u32).map(|i| rt::spawn(async move { i })).collect();
                let mut sum = 0;
                for h in handles {
                    sum += h.await.unwrap();
                }
                sum
            }

            /// A watch receiver's `changed` on a closed channel, in a biased select with a
            /// yield: as tokio's own `receiver_changed_is_cooperative`, counting the errors.
            pub async fn watch_changed_loop() -> u32 {
                let (tx, mut rx) = rt::sync::watch::channel(());
                drop(tx);
                let errors = Cell::new(0);
                rt::select! {
                    biased;
                    _ = async {
                        loop {
                            assert!(rx.changed().await.is_err());
                            errors.set(errors.get() + 1);
                        }
                    } => unreachable!(),
                    _ = rt::task::yield_now() => {}
                }
                errors.get()
            }

            /// 100 one-byte reads of bytes already there, in a fresh poll, then the units
            /// left: each read takes one, as tokio's socket registration does.
            pub async fn tcp_reads_spend() -> u32 {
                use rt::io::{AsyncReadExt, AsyncWriteExt};
                let listener = rt::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let addr = listener.local_addr().unwrap();
                let mut client = rt::net::TcpStream::connect(addr).await.unwrap();
                let (mut server, _) = listener.accept().await.unwrap();
                client.write_all(&[7; 101]).await.unwrap();
                let mut one = [0; 1];
                server.read_exact(&mut one).await.unwrap();
                rt::task::yield_now().await;
                for _ in 0..100 {
                    server.read_exact(&mut one).await.unwrap();
                }
                units_in_a_poll().await
            }

            /// 100 one-byte writes in a fresh poll, then the units left.
            pub async fn tcp_writes_spend() -> u32 {
                use rt::io::AsyncWriteExt;
                let listener = rt::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let addr = listener.local_addr().unwrap();
                let mut client = rt::net::TcpStream::connect(addr).await.unwrap();
                let (_server, _) = listener.accept().await.unwrap();
                rt::task::yield_now().await;
                for _ in 0..100 {
                    client.write_all(&[7]).await.unwrap();
                }
                units_in_a_poll().await
            }

            /// Three connections accepted in a fresh poll, then the units left.
            pub async fn tcp_accepts_spend() -> u32 {
                let listener = rt::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let addr = listener.local_addr().unwrap();
                let mut clients = Vec::new();
                for _ in 0..3 {
                    clients.push(rt::net::TcpStream::connect(addr).await.unwrap());
                }
                let (first, _) = listener.accept().await.unwrap();
                rt::task::yield_now().await;
                let mut accepted = vec![first];
                for _ in 0..2 {
                    accepted.push(listener.accept().await.unwrap().0);
                }
                units_in_a_poll().await
            }

            /// A datagram received in a fresh poll (or in the poll it arrives in), then 100
            /// sent, then the units left: each takes one, as tokio's socket registration does.
            pub async fn udp_recv_and_sends_spend() -> u32 {
                let a = rt::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let b = rt::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let to = b.local_addr().unwrap();
                a.send_to(&[1], to).await.unwrap();
                rt::task::yield_now().await;
                let mut buf = [0; 8];
                b.recv_from(&mut buf).await.unwrap();
                for i in 0..100u8 {
                    a.send_to(&[i], to).await.unwrap();
                }
                units_in_a_poll().await
            }

            /// A task reading a closed connection in a loop (each read ready, at the end)
            /// stops when aborted: the budget ends its poll, where an abort takes effect.
            pub async fn abort_stops_a_read_loop() -> u32 {
                use rt::io::AsyncReadExt;
                let listener = rt::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let addr = listener.local_addr().unwrap();
                let client = rt::net::TcpStream::connect(addr).await.unwrap();
                let (mut server, _) = listener.accept().await.unwrap();
                drop(client);
                let reader = rt::spawn(async move {
                    let mut buf = [0; 8];
                    loop {
                        let _ = server.read(&mut buf).await;
                    }
                });
                rt::task::yield_now().await;
                reader.abort();
                u32::from(reader.await.unwrap_err().is_cancelled())
            }

            /// A sleep that has ended, polled 100 times more in a fresh poll: each poll takes
            /// a unit, as tokio's timer does.
            pub async fn sleeps_spend() -> u32 {
                let mut sleep = Box::pin(rt::time::sleep(std::time::Duration::from_millis(1)));
                sleep.as_mut().await;
                rt::task::yield_now().await;
                for _ in 0..100 {
                    sleep.as_mut().await;
                }
                units_in_a_poll().await
            }

            /// A timeout whose deadline has come, around a loop that always spends the
            /// budget: the timeout looks at its deadline without a budget, so it elapses.
            pub async fn timeout_of_a_busy_loop_elapses() -> u32 {
                let (tx, mut rx) = rt::sync::mpsc::unbounded_channel();
                let busy = async {
                    loop {
                        tx.send(()).unwrap();
                        rx.recv().await.unwrap();
                    }
                };
                let timed = rt::time::timeout_at(rt::time::Instant::now(), busy).await;
                u32::from(timed.is_err())
            }

            /// A sleep's deadline counts from when it is made, not from its first poll: made,
            /// then 5 ms of another sleep, then awaited, it waits 5 ms more, not 10. Returns
            /// whether it waited less than 8 ms (tokio's clock is real).
            pub async fn sleep_counts_from_its_making() -> u32 {
                let ms = std::time::Duration::from_millis;
                let later = rt::time::sleep(ms(10));
                rt::time::sleep(ms(5)).await;
                let before = rt::time::Instant::now();
                later.await;
                u32::from(before.elapsed() < ms(8))
            }

            /// A barrier of two: a waiter's wake takes a unit in the poll it is released in,
            /// the leader's arrival none. The units left then, plus one for a waiter: the
            /// same whichever task arrives first.
            pub async fn barrier_waiter_spends() -> u32 {
                let barrier = std::sync::Arc::new(rt::sync::Barrier::new(2));
                let other = barrier.clone();
                let task = rt::spawn(async move {
                    other.wait().await;
                });
                let leader = barrier.wait().await.is_leader();
                let units = units_in_a_poll().await;
                task.await.unwrap();
                units + u32::from(!leader)
            }
        }
    )*};
}

programs! {
    real: [tokio];
    braided: [braid::tokio];
}

/// What the program returns on tokio's current-thread runtime.
fn on_tokio<F: std::future::Future<Output = u32>>(program: impl FnOnce() -> F) -> u32 {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(program())
}

/// Checks that braid gives what tokio gave, on every schedule of a sample.
fn same<F>(name: &str, expected: u32, program: fn() -> F)
where
    F: std::future::Future<Output = u32> + 'static,
{
    let report = braid::check(move || async move {
        assert_eq!(program().await, expected);
    })
    .name(name)
    .runs(50)
    .run();
    assert!(
        matches!(report.outcome, braid::Outcome::Holds { .. }),
        "{name}: tokio gave {expected}, braid: {:?}",
        report.outcome
    );
}

macro_rules! compare {
    ($($program:ident),* $(,)?) => {$(
        #[test]
        fn $program() {
            let expected = on_tokio(real::$program);
            same(stringify!($program), expected, braided::$program);
        }
    )*};
}

compare!(
    busy_loop_in_select,
    units_in_a_poll,
    unconstrained_spends_nothing,
    pending_gives_back,
    join_set_drains,
    join_handles_in_a_row,
    watch_changed_loop,
    tcp_reads_spend,
    tcp_writes_spend,
    tcp_accepts_spend,
    udp_recv_and_sends_spend,
    barrier_waiter_spends,
    abort_stops_a_read_loop,
    sleeps_spend,
    timeout_of_a_busy_loop_elapses,
    sleep_counts_from_its_making,
);

/// The numbers the comparisons rest on, as tokio gives them (so that a facade and a tokio that
/// both lost the budget could not agree on nothing).
#[test]
fn tokio_gives_the_budget_it_documents() {
    assert_eq!(on_tokio(real::units_in_a_poll), 128);
    assert_eq!(on_tokio(real::unconstrained_spends_nothing), 128);
    assert_eq!(on_tokio(real::pending_gives_back), 128);
    assert_eq!(on_tokio(real::busy_loop_in_select), 256);
    assert_eq!(on_tokio(real::tcp_reads_spend), 28);
    assert_eq!(on_tokio(real::tcp_writes_spend), 28);
    assert_eq!(on_tokio(real::tcp_accepts_spend), 126);
    assert_eq!(on_tokio(real::udp_recv_and_sends_spend), 27);
    assert_eq!(on_tokio(real::barrier_waiter_spends), 128);
    assert_eq!(on_tokio(real::abort_stops_a_read_loop), 1);
    assert_eq!(on_tokio(real::sleeps_spend), 28);
    assert_eq!(on_tokio(real::timeout_of_a_busy_loop_elapses), 1);
}
