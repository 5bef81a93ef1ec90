// The two server programs, written once. `braid_side.rs` and `turmoil_side.rs` each
// `include!` this file after importing their tool's `TcpListener`, `TcpStream`, `fs`,
// `OpenOptions` and `sync_dir`, and a `tokio` (braid's facade `braid::tokio`, or tokio itself
// under turmoil): nothing below names either tool, so both compile the same text.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::time;

/// Connects, retrying while the server is not listening (it may be starting, or restarting
/// after a crash).
async fn connect(addr: &str) -> TcpStream {
    loop {
        match TcpStream::connect(addr).await {
            Ok(s) => return s,
            Err(_) => tokio::task::yield_now().await,
        }
    }
}

/// One request line and its reply line; `None` if the connection failed or closed on the way,
/// or (with a deadline) if the reply did not come in time.
async fn call(
    stream: &mut BufReader<TcpStream>,
    request: &str,
    deadline: Option<Duration>,
) -> Option<String> {
    let exchange = async {
        stream
            .get_mut()
            .write_all(format!("{request}\n").as_bytes())
            .await
            .ok()?;
        let mut reply = String::new();
        match stream.read_line(&mut reply).await {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(reply.trim_end().to_string()),
        }
    };
    match deadline {
        None => exchange.await,
        Some(d) => time::timeout(d, exchange).await.ok().flatten(),
    }
}

// ---- Program 1: a key-value server that acknowledges a SET before its log write is durable.

/// `SET k v` appends `k=v` to the log and replies `OK` (the bug: no `sync_all` before the
/// reply, nor after); `GET k` replies the value or `NONE`. At start it rebuilds its map from
/// the log (whose creation it makes durable: the file, its directory and the root synced).
pub async fn kv_server() {
    fs::create_dir_all("/data").await.unwrap();
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open("/data/log")
        .await
        .unwrap();
    log.sync_all().await.unwrap();
    sync_dir("/data").await.unwrap();
    sync_dir("/").await.unwrap();
    let mut map = BTreeMap::new();
    for line in fs::read_to_string("/data/log").await.unwrap().lines() {
        if let Some((k, v)) = line.split_once('=') {
            map.insert(k.to_string(), v.to_string());
        }
    }
    let map = Arc::new(Mutex::new(map));
    let log = Arc::new(Mutex::new(log));
    let listener = TcpListener::bind("0.0.0.0:7000").await.unwrap();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let (map, log) = (map.clone(), log.clone());
        tokio::spawn(async move {
            let mut lines = BufReader::new(stream);
            let mut line = String::new();
            while matches!(lines.read_line(&mut line).await, Ok(n) if n > 0) {
                let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
                line.clear();
                let reply = match words.as_slice() {
                    [cmd, k, v] if cmd == "SET" => {
                        let mut log = log.lock().await;
                        log.write_all(format!("{k}={v}\n").as_bytes())
                            .await
                            .unwrap();
                        map.lock().await.insert(k.clone(), v.clone());
                        "OK".to_string()
                    }
                    [cmd, k] if cmd == "GET" => map
                        .lock()
                        .await
                        .get(k)
                        .cloned()
                        .unwrap_or_else(|| "NONE".to_string()),
                    _ => "ERR".to_string(),
                };
                if lines
                    .get_mut()
                    .write_all(format!("{reply}\n").as_bytes())
                    .await
                    .is_err()
                {
                    return;
                }
            }
        });
    }
}

/// SET a 1; once acknowledged, `a` must read back as 1, reconnecting across a crash.
pub async fn kv_client() {
    let mut stream = BufReader::new(connect("kv:7000").await);
    if call(&mut stream, "SET a 1", None).await.as_deref() != Some("OK") {
        return; // never acknowledged: nothing was promised
    }
    loop {
        if let Some(v) = call(&mut stream, "GET a", None).await {
            assert_eq!(v, "1", "{}", crate::KV_LOST);
            return;
        }
        stream = BufReader::new(connect("kv:7000").await);
    }
}

// ---- Program 2: a counter, and a client that resends its increment when no reply comes.

/// `INC` adds one and replies the new value; `GET` replies the value.
pub async fn counter_server() {
    let count = Arc::new(Mutex::new(0u32));
    let listener = TcpListener::bind("0.0.0.0:7001").await.unwrap();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let count = count.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stream);
            let mut line = String::new();
            while matches!(lines.read_line(&mut line).await, Ok(n) if n > 0) {
                let reply = {
                    let mut c = count.lock().await;
                    if line.trim() == "INC" {
                        *c += 1;
                    }
                    c.to_string()
                };
                line.clear();
                if lines
                    .get_mut()
                    .write_all(format!("{reply}\n").as_bytes())
                    .await
                    .is_err()
                {
                    return;
                }
            }
        });
    }
}

/// Increments once, resending on a new connection when the reply does not come (an error, a
/// closed connection, or with `deadline` no reply in time); then the count must be 1.
pub async fn retrying_client(deadline: Option<Duration>) {
    let mut stream = BufReader::new(connect("counter:7001").await);
    while call(&mut stream, "INC", deadline).await.is_none() {
        stream = BufReader::new(connect("counter:7001").await);
    }
    let count = loop {
        if let Some(v) = call(&mut stream, "GET", deadline).await {
            break v;
        }
        stream = BufReader::new(connect("counter:7001").await);
    };
    assert_eq!(count, "1", "{}", crate::DOUBLE_APPLY);
}
