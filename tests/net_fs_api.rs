//! `braid::tokio::{net, fs, io}` as tokio code uses them: tokio's io utilities and a codec
//! crate over braid's streams, the errors tokio gives, and clear errors for bad input.

use std::io::ErrorKind;

use braid::tokio::fs::{self, File, OpenOptions};
use braid::tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use braid::tokio::net::{lookup_host, TcpListener, TcpStream, UdpSocket};
use braid::tokio::{self, time};
use futures::{SinkExt, StreamExt};
use std::time::Duration;
use tokio_util::codec::{Framed, LinesCodec};

/// Runs `body` over every schedule the default plan tries; it must hold.
fn holds<F, Fut>(name: &str, body: F)
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    braid::check(body).name(name).runs(300).assert_holds();
}

#[test]
fn tokio_utils_framed_lines_over_a_braid_stream() {
    holds("framed", || async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (stream, peer) = listener.accept().await.unwrap();
            assert_eq!(peer.ip().to_string(), "10.0.0.1");
            let mut framed = Framed::new(stream, LinesCodec::new());
            while let Some(line) = framed.next().await {
                let line = line.unwrap();
                framed.send(line.to_uppercase()).await.unwrap();
            }
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let mut framed = Framed::new(stream, LinesCodec::new());
        framed.send("hello").await.unwrap();
        framed.send("world").await.unwrap();
        assert_eq!(framed.next().await.unwrap().unwrap(), "HELLO");
        assert_eq!(framed.next().await.unwrap().unwrap(), "WORLD");
        drop(framed);
        server.await.unwrap();
    });
}

#[test]
fn split_halves_copy_and_shutdown() {
    holds("split", || async {
        let listener = TcpListener::bind("0.0.0.0:9000").await.unwrap();
        let echo = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let (mut r, mut w) = stream.split();
            // Echo until the client shuts its side down.
            tokio::io::copy(&mut r, &mut w).await.unwrap();
        });
        let stream = TcpStream::connect("localhost:9000").await.unwrap();
        let (mut r, mut w) = stream.into_split();
        w.write_all(b"ping").await.unwrap();
        w.shutdown().await.unwrap();
        let mut back = Vec::new();
        r.read_to_end(&mut back).await.unwrap();
        assert_eq!(back, b"ping");
        echo.await.unwrap();
    });
}

#[test]
fn network_errors_are_tokios() {
    holds("net-errors", || async {
        let refused = TcpStream::connect("127.0.0.1:1").await.unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::ConnectionRefused);

        let _first = TcpListener::bind("0.0.0.0:8080").await.unwrap();
        let twice = TcpListener::bind("0.0.0.0:8080").await.unwrap_err();
        assert_eq!(twice.kind(), ErrorKind::AddrInUse);

        let unknown = TcpStream::connect("nowhere:80").await.unwrap_err();
        let text = unknown.to_string();
        assert!(
            text.contains("unknown host 'nowhere'") && text.contains("main"),
            "{text}"
        );

        let malformed = TcpStream::connect("kv").await.unwrap_err();
        assert_eq!(malformed.kind(), ErrorKind::InvalidInput);
        let bad_port = TcpStream::connect("kv:http").await.unwrap_err();
        assert_eq!(bad_port.kind(), ErrorKind::InvalidInput);

        let main: Vec<_> = lookup_host("main:7").await.unwrap().collect();
        assert_eq!(main[0].to_string(), "10.0.0.1:7");
    });
}

#[test]
fn a_closed_or_reset_stream_reads_as_tokio_does() {
    holds("closed", || async {
        let listener = TcpListener::bind("0.0.0.0:9001").await.unwrap();
        let server = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            stream.write_all(b"bye").await.unwrap();
            // Dropped: the client reads what was sent, then the end.
        });
        let mut stream = TcpStream::connect("main:9001").await.unwrap();
        let mut all = Vec::new();
        stream.read_to_end(&mut all).await.unwrap();
        assert_eq!(all, b"bye");
        assert_eq!(stream.read(&mut [0; 4]).await.unwrap(), 0);
        server.await.unwrap();
        stream.shutdown().await.unwrap();
        let after = stream.write_all(b"x").await.unwrap_err();
        assert_eq!(after.kind(), ErrorKind::BrokenPipe);
    });
}

#[test]
fn files_read_write_seek_and_errors() {
    holds("files", || async {
        fs::create_dir_all("/var/lib/app").await.unwrap();
        fs::write("/var/lib/app/a", b"hello").await.unwrap();
        assert_eq!(fs::read_to_string("/var/lib/app/a").await.unwrap(), "hello");
        // Relative paths resolve from the host's root.
        assert_eq!(fs::read("var/lib/app/a").await.unwrap(), b"hello");

        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/var/lib/app/a")
            .await
            .unwrap();
        f.seek(std::io::SeekFrom::Start(1)).await.unwrap();
        f.write_all(b"EL").await.unwrap();
        f.set_len(4).await.unwrap();
        f.sync_all().await.unwrap();
        assert_eq!(fs::read("/var/lib/app/a").await.unwrap(), b"hELl");

        let mut log = OpenOptions::new()
            .append(true)
            .create(true)
            .open("log")
            .await
            .unwrap();
        log.write_all(b"1\n").await.unwrap();
        log.write_all(b"2\n").await.unwrap();
        // As tokio's, a File's write lands later: without this flush the read below may see
        // "1\n" only (braid found that in this test once writes landed as tokio's do).
        log.flush().await.unwrap();
        let mut text = String::new();
        File::open("log")
            .await
            .unwrap()
            .read_to_string(&mut text)
            .await
            .unwrap();
        assert_eq!(text, "1\n2\n");

        fs::rename("/log", "/var/lib/app/b").await.unwrap();
        assert!(!fs::try_exists("/log").await.unwrap());
        assert_eq!(fs::metadata("/var/lib/app/b").await.unwrap().len(), 4);
        let mut names = Vec::new();
        let mut dir = fs::read_dir("/var/lib/app").await.unwrap();
        while let Some(e) = dir.next_entry().await.unwrap() {
            names.push(e.file_name().into_string().unwrap());
        }
        assert_eq!(names, ["a", "b"]);

        assert_eq!(
            fs::read("/missing").await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            fs::read("/var").await.unwrap_err().kind(),
            ErrorKind::IsADirectory
        );
        assert_eq!(
            fs::create_dir("/x/y").await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            fs::remove_dir("/var/lib").await.unwrap_err().kind(),
            ErrorKind::DirectoryNotEmpty
        );
        assert_eq!(
            File::create_new("/var/lib/app/a").await.unwrap_err().kind(),
            ErrorKind::AlreadyExists
        );
        let outside = fs::read("../../etc/passwd").await.unwrap_err();
        assert_eq!(outside.kind(), ErrorKind::InvalidInput);
        assert!(
            outside
                .to_string()
                .contains("outside the host's file system"),
            "{outside}"
        );
    });
}

#[test]
fn each_host_has_its_own_disk() {
    holds("disks", || async {
        fs::write("/only-on-main", b"m").await.unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let tx = std::rc::Rc::new(std::cell::RefCell::new(Some(tx)));
        braid::node::start("other", move || {
            let tx = tx.clone();
            async move {
                let seen = fs::try_exists("/only-on-main").await.unwrap();
                if let Some(tx) = tx.borrow_mut().take() {
                    let _ = tx.send(seen);
                }
            }
        });
        assert!(!rx.await.unwrap(), "a host saw another host's file");
    });
}

#[test]
#[should_panic(expected = "outside a braid run")]
fn net_outside_a_run_says_so() {
    let _ = futures::executor::block_on(TcpListener::bind("0.0.0.0:1"));
}

/// What `main` says of the datagrams the sink got.
type Judge = fn(&[u8]) -> bool;

/// Three numbered datagrams from `main` to a sink, which collects them until 100 ms pass with
/// nothing; `main` then judges what arrived with `judge`.
fn numbered_datagrams(
    judge: Judge,
) -> impl Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> + Clone + Send + Sync {
    move || {
        Box::pin(async move {
            let (tx, rx) = tokio::sync::oneshot::channel::<Vec<u8>>();
            let tx = std::rc::Rc::new(std::cell::RefCell::new(Some(tx)));
            let bound = std::sync::Arc::new(tokio::sync::Notify::new());
            let b = bound.clone();
            braid::node::start("sink", move || {
                let (tx, bound) = (tx.clone(), b.clone());
                async move {
                    let socket = UdpSocket::bind("0.0.0.0:5000").await.unwrap();
                    bound.notify_one();
                    let mut got = Vec::new();
                    let mut buf = [0; 8];
                    loop {
                        let wait = Duration::from_millis(100);
                        let Ok(received) = time::timeout(wait, socket.recv_from(&mut buf)).await
                        else {
                            break;
                        };
                        let (n, from) = received.unwrap();
                        assert_eq!((n, from.to_string().as_str()), (1, "10.0.0.1:6000"));
                        got.push(buf[0]);
                    }
                    if let Some(tx) = tx.borrow_mut().take() {
                        let _ = tx.send(got);
                    }
                }
            });
            let socket = UdpSocket::bind("0.0.0.0:6000").await.unwrap();
            // A datagram sent before the sink is bound would be dropped, as UDP's.
            bound.notified().await;
            socket.connect("sink:5000").await.unwrap();
            for i in 1..=3u8 {
                socket.send(&[i]).await.unwrap();
            }
            if let Ok(got) = rx.await {
                assert!(judge(&got), "datagrams arrived as {got:?}");
            }
        })
    }
}

#[test]
fn udp_datagrams_without_faults_arrive_once_in_order() {
    braid::check(numbered_datagrams(|got| got == [1, 2, 3]))
        .name("udp-no-faults")
        .clock_jumps(0)
        .runs(2_000)
        .assert_holds();
}

/// Each fault is found by the one property only it (of the UDP faults) breaks, and the failure
/// names it. A lost datagram has a second cause: a partition between the two hosts (the
/// socket is connected) loses what is sent across it, so that case accepts either.
#[test]
fn udp_faults_drop_duplicate_and_reorder_datagrams() {
    let cases: [(&[&str], Judge); 3] = [
        (&["1 drop", "1 partition"], |got| {
            [1, 2, 3].iter().all(|i| got.contains(i))
        }),
        (&["1 duplicate"], |got| {
            (1..got.len()).all(|i| !got[..i].contains(&got[i]))
        }),
        (&["1 reorder"], |got| got.windows(2).all(|w| w[0] <= w[1])),
    ];
    for (faults, judge) in cases {
        let fault = faults[0];
        let report = braid::check(numbered_datagrams(judge))
            .name(fault)
            .network_faults(1)
            .clock_jumps(0)
            .runs(20_000)
            .out(std::env::temp_dir().join("braid-udp-faults"))
            .run();
        let failure = report
            .failure()
            .unwrap_or_else(|| panic!("{fault}: not found: {:?}", report.outcome));
        assert!(
            failure.message.contains("datagrams arrived as"),
            "{}",
            failure.message
        );
        assert!(
            faults.iter().any(|f| failure.size.starts_with(f)),
            "{fault}: {}",
            failure.size
        );
    }
}

#[test]
fn a_fault_budget_with_nothing_to_strike_is_no_pass() {
    let report = braid::check(|| async {}).network_faults(1).run();
    match report.outcome {
        braid::Outcome::Inconclusive(why) => {
            assert!(why.contains("network_faults(1) was asked"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    let report = braid::check(|| async {}).crashes(2).run();
    match report.outcome {
        braid::Outcome::Inconclusive(why) => assert!(why.contains("starts no node"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn remove_dir_all_and_copy() {
    holds("remove-all", || async {
        fs::create_dir_all("/a/b/c").await.unwrap();
        fs::write("/a/b/c/f", b"x").await.unwrap();
        fs::write("/a/g", b"y").await.unwrap();
        assert_eq!(fs::copy("/a/g", "/h").await.unwrap(), 1);
        fs::remove_dir_all("/a").await.unwrap();
        assert!(!fs::try_exists("/a/b/c/f").await.unwrap());
        assert!(!fs::try_exists("/a").await.unwrap());
        assert_eq!(fs::read("/h").await.unwrap(), b"y");
        assert_eq!(
            fs::remove_dir_all("/h").await.unwrap_err().kind(),
            ErrorKind::NotADirectory
        );
    });
}

/// A run that uses the network or a disk is searched with reduction (its steps are accesses
/// to objects the reduction sees; `tests/net_fs_reduction.rs` checks it against plain
/// search), unless it may strike a fault: a strike's enabling depends on the budget, which no
/// reduction sees.
#[test]
fn the_network_and_disks_are_searched_with_reduction_unless_faults_may_strike() {
    let runs = |reduction, faults| {
        let report = braid::check(|| async {
            let listener = TcpListener::bind("0.0.0.0:80").await.unwrap();
            let writer = tokio::spawn(async {
                fs::write("note", b"x").await.unwrap();
                let mut s = TcpStream::connect("main:80").await.unwrap();
                let _ = s.write_all(b"hi").await;
            });
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0; 2];
            let _ = s.read_exact(&mut buf).await;
            writer.await.unwrap();
        })
        .strategy(braid::Strategy::Dfs {
            preemption_bound: Some(1),
            reduction,
        })
        .network_faults(faults)
        .run();
        match report.outcome {
            braid::Outcome::Holds { runs, .. } => runs,
            other => panic!("{other:?}"),
        }
    };
    use braid::engine::strategy::Reduction;
    let (reduced, plain) = (runs(Reduction::VisitedStates, 0), runs(Reduction::None, 0));
    assert!(reduced < plain, "{reduced} >= {plain}");
    assert_eq!(runs(Reduction::VisitedStates, 1), runs(Reduction::None, 1));
}

/// Two `sync_all`s of one shared file (an `Arc<File>`) with a write in flight: as in tokio, each
/// holds the file's lock from waiting out that write to its own end, so whichever returns
/// first, the write is durable by then: a crash after it keeps the byte. (Before, the second
/// sync could find the write taken by the first and sync before it landed.)
#[test]
fn two_syncs_of_one_shared_file_each_make_the_write_in_flight_durable() {
    use braid::node::Durable;
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::sync::Arc;
    let report = braid::check(|| async {
        braid::node::seed_file("db", "/f", b"").unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let tx = Rc::new(RefCell::new(Some(tx)));
        let synced = Rc::new(Durable::new("synced", false));
        braid::node::start("db", move || {
            let (tx, synced) = (tx.clone(), synced.clone());
            async move {
                if synced.with(|s| *s) {
                    // Rebooted after a sync returned: the byte it covered is on disk.
                    assert_eq!(fs::read("/f").await.unwrap(), b"x");
                } else {
                    let mut f = OpenOptions::new().write(true).open("/f").await.unwrap();
                    f.write_all(b"x").await.unwrap(); // in flight, not flushed
                    let f = Arc::new(f);
                    let (g, also) = (Arc::clone(&f), Rc::clone(&synced));
                    let other = tokio::task::spawn_local(async move {
                        g.sync_all().await.unwrap();
                        also.with_mut(|s| *s = true);
                    });
                    f.sync_all().await.unwrap();
                    synced.with_mut(|s| *s = true);
                    other.await.unwrap();
                }
                if let Some(tx) = tx.borrow_mut().take() {
                    let _ = tx.send(());
                }
            }
        });
        let _ = rx.await;
    })
    .crashes(1)
    .strategy(braid::Strategy::Dfs {
        preemption_bound: Some(2),
        reduction: braid::engine::strategy::Reduction::None,
    })
    .run();
    assert!(
        matches!(report.outcome, braid::Outcome::Holds { .. }),
        "{:?}",
        report.outcome
    );
}

/// A task aborted while it waits for a shared file's lock (in `sync_all`) gives up its place:
/// the next waiter still gets the lock when the holder lets go, as with tokio's `Mutex`.
#[test]
fn an_aborted_sync_waiting_on_a_shared_file_does_not_strand_the_next() {
    use std::sync::Arc;
    let report = braid::check(|| async {
        let mut f = File::create("/f").await.unwrap();
        f.write_all(b"x").await.unwrap(); // in flight: the first sync waits for it
        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let first = tokio::spawn(async move { f.sync_all().await.unwrap() });
        let aborted = tokio::spawn(async move { g.sync_all().await.unwrap() });
        let last = tokio::spawn(async move { h.sync_all().await.unwrap() });
        aborted.abort();
        let _ = aborted.await;
        first.await.unwrap();
        last.await.unwrap();
    })
    .strategy(braid::Strategy::Dfs {
        preemption_bound: Some(2),
        reduction: braid::engine::strategy::Reduction::VisitedStates,
    })
    .run();
    assert!(
        matches!(report.outcome, braid::Outcome::Holds { .. }),
        "{:?}",
        report.outcome
    );
}
