//! tokio's `io`: its traits (`AsyncRead`, `AsyncWrite`, `AsyncBufRead`, `AsyncSeek`), their
//! extensions, `BufReader`/`BufWriter`, `split`, `copy`, `duplex` and the rest of its io-util,
//! re-exported whole (they need no runtime): braid's streams and files implement the traits.
//! Not here: `stdin`/`stdout` (tokio's `io-std`, which runs on tokio's blocking pool).

pub use tokio::io::*;
