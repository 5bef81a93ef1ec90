//! The interpreter, written once and instantiated per runtime by [`interpreter!`](crate::interpreter).

/// Defines, in the module that invokes it, `run_program(prog, cfg) -> Outcome`: the harness that
/// builds a program's objects, spawns its tasks in order, interprets their operations, waits
/// until every task has ended, and returns what the run reached.
///
/// The invoking module provides, by these names:
/// - `rt`: the runtime (`tokio`, or `braid::tokio`); `at`: its atomics
///   (`std::sync::atomic`, or `braid::std::sync::atomic`);
/// - `Cfg` (one run's configuration) and `Hooks` (one task's), `fn hooks(&Cfg, &Program,
///   task) -> Hooks`, and `async fn point(&mut Hooks)`: awaited before every facade call, every
///   drop of a guard, permit, channel end or connection end, and before a task's end (tokio:
///   the perturbation; braid: nothing, or a scheduling point at the paranoid grain);
/// - `TICK` (a harness wait's tick), `QUIET_TICKS` (how many quiet ticks make a wait give up),
///   `fn moved(now, seen) -> bool` (whether a task moved, so that a tick is not quiet: `now` is
///   the progress count at the tick, `seen` at the wait's start or its last tick), and
///   `async fn settle_wait(&Run)` (how the harness waits for every task to end);
/// - `fn scratch_file() -> (PathBuf, Box<dyn Any + Send>)`: a path for the shared file, where
///   no file is yet, and what must live until the run's end for it (a temporary directory);
/// - `fn release_kept(Vec<Box<dyn Any + Send>>)`: what stuck tasks held that must not leak (an
///   end of the connection, a socket under tokio), released once the run's outcome is recorded.
#[macro_export]
macro_rules! interpreter {
    () => {
        use std::any::Any;
        use std::future::Future;
        use std::path::PathBuf;
        use std::pin::Pin;
        use std::sync::atomic::Ordering::SeqCst;
        use std::sync::Arc;

        use rt::io::{AsyncReadExt as _, AsyncWriteExt as _};
        use $crate::outcome::{End, Obs, Outcome, Run, Settle, RUNNING, WAITING};
        use $crate::program::{OnBlock, Op, Program, WaitOp, ATOMS};

        type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

        struct Objs {
            atoms: Vec<at::AtomicUsize>,
            mutex: rt::sync::Mutex<usize>,
            rw: rt::sync::RwLock<usize>,
            notify: rt::sync::Notify,
            sem: rt::sync::Semaphore,
            aborts: std::sync::Mutex<Vec<Option<rt::task::AbortHandle>>>,
            /// The shared file (nowhere, when no task uses it).
            file: PathBuf,
            /// What stuck tasks held and the harness releases after the outcome.
            kept: std::sync::Mutex<Vec<Box<dyn Any + Send>>>,
        }

        /// A task's hold on the connection: an end whole, or one of its halves.
        enum NetEnd {
            Whole(rt::net::TcpStream),
            Read(rt::net::tcp::OwnedReadHalf),
            Write(rt::net::tcp::OwnedWriteHalf),
        }

        impl NetEnd {
            fn reader(&mut self) -> Option<&mut (dyn rt::io::AsyncRead + Unpin + Send)> {
                match self {
                    NetEnd::Whole(s) => Some(s),
                    NetEnd::Read(r) => Some(r),
                    NetEnd::Write(_) => None,
                }
            }

            fn writer(&mut self) -> Option<&mut (dyn rt::io::AsyncWrite + Unpin + Send)> {
                match self {
                    NetEnd::Whole(s) => Some(s),
                    NetEnd::Read(_) => None,
                    NetEnd::Write(w) => Some(w),
                }
            }
        }

        fn io_obs(r: std::io::Result<()>) -> Obs {
            match r {
                Ok(()) => Obs::Ok,
                Err(e) => Obs::Io(e.kind()),
            }
        }

        #[derive(Default)]
        struct Ends {
            os_tx: Option<rt::sync::oneshot::Sender<u8>>,
            os_rx: Option<rt::sync::oneshot::Receiver<u8>>,
            ch_tx: Option<rt::sync::mpsc::Sender<u8>>,
            ch_rx: Option<rt::sync::mpsc::Receiver<u8>>,
            w_tx: Option<rt::sync::watch::Sender<u8>>,
            w_rx: Option<rt::sync::watch::Receiver<u8>>,
            net: Option<NetEnd>,
        }

        /// What a completed wait gives.
        enum Got<'a, 'o> {
            Obs(Obs),
            Guard(rt::sync::MutexGuard<'o, usize>),
            Read(rt::sync::RwLockReadGuard<'o, usize>),
            Write(rt::sync::RwLockWriteGuard<'o, usize>),
            Permit(rt::sync::SemaphorePermit<'o>),
            Reserved(rt::sync::mpsc::Permit<'a, u8>, u8),
            /// A join: `Ok(stuck)`, or cancelled.
            Joined(Result<bool, ()>),
        }

        /// The borrows a wait may need (each given to at most one of a `select!`'s branches).
        #[derive(Default)]
        struct Lend<'a> {
            os_rx: Option<&'a mut rt::sync::oneshot::Receiver<u8>>,
            ch_tx: Option<&'a rt::sync::mpsc::Sender<u8>>,
            ch_rx: Option<&'a mut rt::sync::mpsc::Receiver<u8>>,
            w_rx: Option<&'a mut rt::sync::watch::Receiver<u8>>,
            join: Option<&'a mut rt::task::JoinHandle<bool>>,
            net_rd: Option<&'a mut (dyn rt::io::AsyncRead + Unpin + Send)>,
        }

        fn wait_fut<'a, 'o: 'a>(
            w: WaitOp,
            objs: &'o Objs,
            lend: Lend<'a>,
        ) -> BoxFut<'a, Got<'a, 'o>> {
            const LENT: &str = "the generator gives a wait what it borrows";
            match w {
                WaitOp::Lock => Box::pin(async move { Got::Guard(objs.mutex.lock().await) }),
                WaitOp::Read => Box::pin(async move { Got::Read(objs.rw.read().await) }),
                WaitOp::Write => Box::pin(async move { Got::Write(objs.rw.write().await) }),
                WaitOp::Acquire => {
                    Box::pin(
                        async move { Got::Permit(objs.sem.acquire().await.expect("never closed")) },
                    )
                }
                WaitOp::Notified => Box::pin(async move {
                    objs.notify.notified().await;
                    Got::Obs(Obs::Ok)
                }),
                WaitOp::OsRecv => {
                    let rx = lend.os_rx.expect(LENT);
                    Box::pin(async move {
                        Got::Obs(match rx.await {
                            Ok(v) => Obs::V(usize::from(v)),
                            Err(_) => Obs::Closed,
                        })
                    })
                }
                WaitOp::Send(v) => {
                    let tx = lend.ch_tx;
                    Box::pin(async move {
                        Got::Obs(match tx {
                            Some(tx) => match tx.send(v).await {
                                Ok(()) => Obs::Ok,
                                Err(_) => Obs::Closed,
                            },
                            // Dropped already (by a drop op or a lost select).
                            None => Obs::Empty,
                        })
                    })
                }
                WaitOp::Reserve(v) => {
                    let tx = lend.ch_tx;
                    Box::pin(async move {
                        match tx {
                            Some(tx) => match tx.reserve().await {
                                Ok(p) => Got::Reserved(p, v),
                                Err(_) => Got::Obs(Obs::Closed),
                            },
                            None => Got::Obs(Obs::Empty),
                        }
                    })
                }
                WaitOp::Recv => {
                    let rx = lend.ch_rx.expect(LENT);
                    Box::pin(async move {
                        Got::Obs(match rx.recv().await {
                            Some(v) => Obs::V(usize::from(v)),
                            None => Obs::Closed,
                        })
                    })
                }
                WaitOp::Changed => {
                    let rx = lend.w_rx.expect(LENT);
                    Box::pin(async move {
                        Got::Obs(match rx.changed().await {
                            Ok(()) => Obs::Ok,
                            Err(_) => Obs::Closed,
                        })
                    })
                }
                WaitOp::Join(_) => {
                    let h = lend.join.expect(LENT);
                    Box::pin(async move {
                        Got::Joined(match h.await {
                            Ok(stuck) => Ok(stuck),
                            Err(_) => Err(()),
                        })
                    })
                }
                WaitOp::NetRead => {
                    let rd = lend.net_rd.expect(LENT);
                    Box::pin(async move {
                        let mut byte = [0u8; 1];
                        Got::Obs(match rd.read(&mut byte).await {
                            Ok(0) => Obs::Eof,
                            Ok(_) => Obs::V(usize::from(byte[0])),
                            Err(e) => Obs::Io(e.kind()),
                        })
                    })
                }
            }
        }

        /// A harness-timed wait: `None` when it can never complete (no other task can move).
        async fn wait<T>(run: &Run, me: usize, fut: BoxFut<'_, T>) -> Option<T> {
            run.set_state(me, WAITING);
            let mut fut = fut;
            let mut seen = run.progress();
            let mut quiet = 0;
            loop {
                match rt::time::timeout(TICK, fut.as_mut()).await {
                    Ok(v) => {
                        run.set_state(me, RUNNING);
                        run.bump();
                        return Some(v);
                    }
                    Err(_) => {
                        let now = run.progress();
                        if run.others_quiet(me) && !moved(now, seen) {
                            quiet += 1;
                            if quiet >= QUIET_TICKS {
                                run.set_state(me, RUNNING);
                                return None;
                            }
                        } else {
                            quiet = 0;
                        }
                        seen = now;
                    }
                }
            }
        }

        #[allow(clippy::too_many_arguments)]
        async fn task_body(
            run: Arc<Run>,
            objs: Arc<Objs>,
            prog: Arc<Program>,
            me: usize,
            mut ends: Ends,
            mut joins: Vec<(usize, rt::task::JoinHandle<bool>)>,
            mut h: Hooks,
            settle: Settle,
        ) -> bool {
            let _settle = settle;
            let objs: &Objs = &objs;
            let mut guard: Option<rt::sync::MutexGuard<'_, usize>> = None;
            let mut read: Option<rt::sync::RwLockReadGuard<'_, usize>> = None;
            let mut write: Option<rt::sync::RwLockWriteGuard<'_, usize>> = None;
            let mut permit: Option<rt::sync::SemaphorePermit<'_>> = None;
            let obs = |o: Obs| run.observe(me, o);
            let abort_handle = |t: usize| {
                objs.aborts.lock().unwrap()[t]
                    .clone()
                    .expect("a task spawned before")
            };
            let mut stuck = None;
            for (k, op) in prog.tasks[me].iter().enumerate() {
                point(&mut h).await;
                // What a wait got, or `None` if it can never complete.
                let got: Option<Option<(Option<u8>, Got<'_, '_>)>> = match *op {
                    Op::Load(a) => {
                        obs(Obs::V(objs.atoms[a].load(SeqCst)));
                        None
                    }
                    Op::Store(a, v) => {
                        objs.atoms[a].store(usize::from(v), SeqCst);
                        None
                    }
                    Op::FetchAdd(a) => {
                        obs(Obs::V(objs.atoms[a].fetch_add(1, SeqCst)));
                        None
                    }
                    Op::Wait(w, _) => {
                        let lend = Lend {
                            os_rx: ends.os_rx.as_mut(),
                            ch_tx: ends.ch_tx.as_ref(),
                            ch_rx: ends.ch_rx.as_mut(),
                            w_rx: ends.w_rx.as_mut(),
                            net_rd: ends.net.as_mut().and_then(NetEnd::reader),
                            join: match w {
                                WaitOp::Join(t) => {
                                    joins.iter_mut().find(|(j, _)| *j == t).map(|(_, h)| h)
                                }
                                _ => None,
                            },
                        };
                        let fut = wait_fut(w, objs, lend);
                        Some(wait(&run, me, fut).await.map(|g| (None, g)))
                    }
                    Op::Select(a, b, _) => {
                        let mut la = Lend::default();
                        let mut lb = Lend::default();
                        let to_a = |w: WaitOp| a == w;
                        match (to_a(WaitOp::OsRecv), ends.os_rx.as_mut()) {
                            (true, r) => la.os_rx = r,
                            (false, r) => lb.os_rx = r,
                        }
                        match (to_a(WaitOp::Recv), ends.ch_rx.as_mut()) {
                            (true, r) => la.ch_rx = r,
                            (false, r) => lb.ch_rx = r,
                        }
                        match (to_a(WaitOp::Changed), ends.w_rx.as_mut()) {
                            (true, r) => la.w_rx = r,
                            (false, r) => lb.w_rx = r,
                        }
                        match (
                            to_a(WaitOp::NetRead),
                            ends.net.as_mut().and_then(NetEnd::reader),
                        ) {
                            (true, r) => la.net_rd = r,
                            (false, r) => lb.net_rd = r,
                        }
                        la.ch_tx = ends.ch_tx.as_ref();
                        lb.ch_tx = ends.ch_tx.as_ref();
                        let fa = wait_fut(a, objs, la);
                        let fb = wait_fut(b, objs, lb);
                        let sel: BoxFut<'_, (u8, Got<'_, '_>)> = Box::pin(async move {
                            rt::select! {
                                g = fa => (0u8, g),
                                g = fb => (1u8, g),
                            }
                        });
                        Some(wait(&run, me, sel).await.map(|(i, g)| (Some(i), g)))
                    }
                    Op::Unlock => {
                        drop(guard.take());
                        None
                    }
                    Op::ReadDrop => {
                        drop(read.take());
                        None
                    }
                    Op::WriteDrop => {
                        drop(write.take());
                        None
                    }
                    Op::Release => {
                        drop(permit.take());
                        None
                    }
                    Op::NotifyOne => {
                        objs.notify.notify_one();
                        None
                    }
                    Op::NotifyWaiters => {
                        objs.notify.notify_waiters();
                        None
                    }
                    Op::OsSend(v) => {
                        let tx = ends.os_tx.take().expect("os_tx's owner");
                        obs(match tx.send(v) {
                            Ok(()) => Obs::Ok,
                            Err(_) => Obs::Err,
                        });
                        None
                    }
                    Op::OsTryRecv => {
                        let rx = ends.os_rx.as_mut().expect("os_rx's owner");
                        obs(match rx.try_recv() {
                            Ok(v) => Obs::V(usize::from(v)),
                            Err(rt::sync::oneshot::error::TryRecvError::Empty) => Obs::Empty,
                            Err(rt::sync::oneshot::error::TryRecvError::Closed) => Obs::Closed,
                        });
                        None
                    }
                    Op::OsDropTx => {
                        drop(ends.os_tx.take());
                        None
                    }
                    Op::OsDropRx => {
                        drop(ends.os_rx.take());
                        None
                    }
                    Op::TryRecv => {
                        let rx = ends.ch_rx.as_mut().expect("ch_rx's owner");
                        obs(match rx.try_recv() {
                            Ok(v) => Obs::V(usize::from(v)),
                            Err(rt::sync::mpsc::error::TryRecvError::Empty) => Obs::Empty,
                            Err(rt::sync::mpsc::error::TryRecvError::Disconnected) => Obs::Closed,
                        });
                        None
                    }
                    Op::DropTx => {
                        drop(ends.ch_tx.take());
                        None
                    }
                    Op::WSend(v) => {
                        let tx = ends.w_tx.as_ref().expect("w_tx's owner");
                        obs(match tx.send(v) {
                            Ok(()) => Obs::Ok,
                            Err(_) => Obs::Closed,
                        });
                        None
                    }
                    Op::WBorrow => {
                        let rx = ends.w_rx.as_mut().expect("a watch receiver");
                        let v = *rx.borrow_and_update();
                        obs(Obs::V(usize::from(v)));
                        None
                    }
                    Op::Abort(t) => {
                        abort_handle(t).abort();
                        None
                    }
                    Op::IsFinished(t) => {
                        let finished = abort_handle(t).is_finished() && !run.is_stuck(t);
                        obs(Obs::Bool(finished));
                        None
                    }
                    Op::Yield => {
                        rt::task::yield_now().await;
                        None
                    }
                    Op::Sleep => {
                        let never: BoxFut<'_, ()> = Box::pin(std::future::pending());
                        let _ = wait(&run, me, never).await;
                        // It moves on: a move the other waits must see (one that gives up
                        // now would decide against a task that is about to move).
                        run.bump();
                        None
                    }
                    Op::NetWrite(b) => {
                        let w = ends.net.as_mut().and_then(NetEnd::writer);
                        let w = w.expect("the generator gives a write an end's write side");
                        obs(io_obs(w.write_all(&[b]).await));
                        None
                    }
                    Op::NetShutdown => {
                        let w = ends.net.as_mut().and_then(NetEnd::writer);
                        let w = w.expect("the generator gives a shutdown an end's write side");
                        obs(io_obs(w.shutdown().await));
                        None
                    }
                    Op::Append(b) => {
                        let opened = rt::fs::OpenOptions::new()
                            .append(true)
                            .create(true)
                            .open(&objs.file)
                            .await;
                        let appended = match opened {
                            Ok(mut file) => {
                                point(&mut h).await;
                                file.write_all(&[b]).await
                            }
                            Err(e) => Err(e),
                        };
                        obs(io_obs(appended));
                        None
                    }
                    Op::ReadFile => {
                        obs(match rt::fs::read(&objs.file).await {
                            Ok(bytes) => Obs::Bytes(bytes),
                            Err(e) => Obs::Io(e.kind()),
                        });
                        None
                    }
                };
                let Some(got) = got else { continue };
                let on_block = match *op {
                    Op::Wait(_, o) | Op::Select(_, _, o) => o,
                    _ => unreachable!("only waits get"),
                };
                let blocked = match got {
                    None => true,
                    Some((branch, got)) => {
                        if let Some(i) = branch {
                            obs(Obs::Won(i));
                        }
                        match got {
                            Got::Obs(o) => {
                                obs(o);
                                false
                            }
                            Got::Guard(mut g) => {
                                obs(Obs::V(*g));
                                *g += 1;
                                guard = Some(g);
                                false
                            }
                            Got::Read(g) => {
                                obs(Obs::V(*g));
                                read = Some(g);
                                false
                            }
                            Got::Write(mut g) => {
                                obs(Obs::V(*g));
                                *g += 1;
                                write = Some(g);
                                false
                            }
                            Got::Permit(p) => {
                                permit = Some(p);
                                false
                            }
                            Got::Reserved(p, v) => {
                                point(&mut h).await;
                                p.send(v);
                                obs(Obs::Ok);
                                false
                            }
                            Got::Joined(Ok(false)) => {
                                obs(Obs::Ok);
                                false
                            }
                            // The joined task is stuck: so is this join.
                            Got::Joined(Ok(true)) => true,
                            Got::Joined(Err(())) => {
                                obs(Obs::Cancelled);
                                false
                            }
                        }
                    }
                };
                if blocked {
                    match on_block {
                        OnBlock::TimedOut => {
                            obs(Obs::TimedOut);
                            // It moves on: a move the other waits must see.
                            run.bump();
                        }
                        OnBlock::Stuck => {
                            stuck = Some(k);
                            break;
                        }
                    }
                }
            }
            if let Some(k) = stuck {
                // Stuck for good: it never releases what it holds (its end of the connection
                // stays open until the run's outcome is recorded: a socket must not leak).
                run.end(me, End::Stuck(k));
                if let Some(net) = ends.net.take() {
                    objs.kept.lock().unwrap().push(Box::new(net));
                }
                std::mem::forget((guard, read, write, permit, ends, joins));
                return true;
            }
            // The end: what it still holds is dropped, each drop a facade call of its own.
            if guard.is_some() {
                point(&mut h).await;
                drop(guard.take());
            }
            if read.is_some() {
                point(&mut h).await;
                drop(read.take());
            }
            if write.is_some() {
                point(&mut h).await;
                drop(write.take());
            }
            if permit.is_some() {
                point(&mut h).await;
                drop(permit.take());
            }
            let Ends {
                os_tx,
                os_rx,
                ch_tx,
                ch_rx,
                w_tx,
                w_rx,
                net,
            } = ends;
            if os_tx.is_some() {
                point(&mut h).await;
                drop(os_tx);
            }
            if os_rx.is_some() {
                point(&mut h).await;
                drop(os_rx);
            }
            if ch_tx.is_some() {
                point(&mut h).await;
                drop(ch_tx);
            }
            if ch_rx.is_some() {
                point(&mut h).await;
                drop(ch_rx);
            }
            if w_tx.is_some() {
                point(&mut h).await;
                drop(w_tx);
            }
            if w_rx.is_some() {
                point(&mut h).await;
                drop(w_rx);
            }
            // A close: the other end sees the end of the stream (or a reset, under tokio, if
            // bytes it sent were never read).
            if net.is_some() {
                point(&mut h).await;
                drop(net);
            }
            // Join handles never awaited: dropped (detached) here.
            joins.clear();
            point(&mut h).await;
            run.end(me, End::Done);
            false
        }

        /// Connects a stream to a listener on 127.0.0.1 (this host) and hands out the two ends,
        /// whole or as halves, as `prog` says.
        async fn connect(prog: &Program, ends: &mut [Ends]) {
            let Some(roles) = prog.roles.net else { return };
            let listener = rt::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a listener on 127.0.0.1");
            let addr = listener.local_addr().expect("the listener's address");
            let connected = rt::net::TcpStream::connect(addr)
                .await
                .expect("a connection to the listener");
            let (accepted, _) = listener.accept().await.expect("the connection, accepted");
            drop(listener);
            for (e, stream) in [connected, accepted].into_iter().enumerate() {
                let (reader, writer) = (roles.reader[e], roles.writer[e]);
                if reader == writer {
                    ends[reader].net = Some(NetEnd::Whole(stream));
                } else {
                    let (r, w) = stream.into_split();
                    ends[reader].net = Some(NetEnd::Read(r));
                    ends[writer].net = Some(NetEnd::Write(w));
                }
            }
        }

        /// Runs `prog` once: builds its objects, hands out the channel ends and the
        /// connection's, spawns its tasks in order, and returns what they reached once every one
        /// has ended.
        pub async fn run_program(prog: Arc<Program>, cfg: Cfg) -> Outcome {
            let n = prog.tasks.len();
            let run = Arc::new(Run::new(n));
            let (file, scratch) = match prog.uses_file() {
                true => scratch_file(),
                false => (PathBuf::new(), Box::new(()) as Box<dyn Any + Send>),
            };
            let objs = Arc::new(Objs {
                atoms: (0..ATOMS).map(|_| at::AtomicUsize::new(0)).collect(),
                mutex: rt::sync::Mutex::new(0),
                rw: rt::sync::RwLock::new(0),
                notify: rt::sync::Notify::new(),
                sem: rt::sync::Semaphore::new(1),
                aborts: std::sync::Mutex::new((0..n).map(|_| None).collect()),
                file,
                kept: std::sync::Mutex::new(Vec::new()),
            });
            let mut ends: Vec<Ends> = (0..n).map(|_| Ends::default()).collect();
            let roles = prog.roles;
            {
                let (tx, rx) = rt::sync::oneshot::channel::<u8>();
                if let Some(t) = roles.os_tx {
                    ends[t].os_tx = Some(tx);
                }
                if let Some(t) = roles.os_rx {
                    ends[t].os_rx = Some(rx);
                }
            }
            {
                let (tx, rx) = rt::sync::mpsc::channel::<u8>(1);
                for (i, e) in ends.iter_mut().enumerate() {
                    if prog.has_ch_tx(i) {
                        e.ch_tx = Some(tx.clone());
                    }
                }
                if let Some(t) = roles.ch_rx {
                    ends[t].ch_rx = Some(rx);
                }
            }
            {
                let (tx, rx) = rt::sync::watch::channel::<u8>(0);
                for (i, e) in ends.iter_mut().enumerate() {
                    if prog.has_w_rx(i) {
                        e.w_rx = Some(rx.clone());
                    }
                }
                if let Some(t) = roles.w_tx {
                    ends[t].w_tx = Some(tx);
                }
            }
            connect(&prog, &mut ends).await;
            let mut handles: Vec<Option<rt::task::JoinHandle<bool>>> = Vec::with_capacity(n);
            for (i, e) in ends.into_iter().enumerate() {
                let joins = prog
                    .joins(i)
                    .into_iter()
                    .map(|t| (t, handles[t].take().expect("joined once")))
                    .collect();
                let settle = Settle {
                    run: run.clone(),
                    me: i,
                };
                let body = task_body(
                    run.clone(),
                    objs.clone(),
                    prog.clone(),
                    i,
                    e,
                    joins,
                    hooks(&cfg, &prog, i),
                    settle,
                );
                let handle = rt::spawn(body);
                objs.aborts.lock().unwrap()[i] = Some(handle.abort_handle());
                handles.push(Some(handle));
            }
            settle_wait(&run).await;
            let atoms = objs.atoms.iter().map(|a| a.load(SeqCst)).collect();
            drop(handles);
            let outcome = run.outcome(atoms);
            release_kept(std::mem::take(&mut *objs.kept.lock().unwrap()));
            drop(scratch);
            outcome
        }
    };
}
