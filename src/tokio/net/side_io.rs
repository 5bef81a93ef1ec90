//! tokio's io traits for a stream and its halves, written once: each reads or writes its
//! connection side (`self.side`, a `Side` or a reference to one), so the stream and its halves
//! cannot drift apart.

/// `AsyncRead` through `self.side`.
macro_rules! read_via_side {
    ($t:ty) => {
        impl tokio::io::AsyncRead for $t {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.side.poll_read(cx, buf)
            }
        }
    };
}

/// `AsyncWrite` through `self.side`: a flush has nothing to wait for (a write is on its way
/// when it returns); a shutdown ends this side's direction.
macro_rules! write_via_side {
    ($t:ty) => {
        impl tokio::io::AsyncWrite for $t {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.side.poll_write(cx, buf)
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::task::Poll::Ready(Ok(()))
            }

            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.side.shutdown();
                std::task::Poll::Ready(Ok(()))
            }
        }
    };
}
