//! The writing half and the connection info of the connection wrappers (`admission.rs`'s
//! [`crate::admission::Admitted`], `authority.rs`'s `AuthorityFix`): each reads in its own
//! way, and passes writes and `Connected` straight to the connection it wraps.

/// `AsyncWrite` and `Connected` for `$wrapper<S>` through its field `$field: S`.
macro_rules! write_and_connect_through {
    ($wrapper:ident, $field:ident) => {
        impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for $wrapper<S> {
            fn poll_write(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.$field).poll_write(cx, buf)
            }

            fn poll_flush(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.$field).poll_flush(cx)
            }

            fn poll_shutdown(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.$field).poll_shutdown(cx)
            }

            fn poll_write_vectored(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.$field).poll_write_vectored(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                self.$field.is_write_vectored()
            }
        }

        impl<S: tonic::transport::server::Connected> tonic::transport::server::Connected
            for $wrapper<S>
        {
            type ConnectInfo = S::ConnectInfo;

            fn connect_info(&self) -> Self::ConnectInfo {
                self.$field.connect_info()
            }
        }
    };
}

pub(crate) use write_and_connect_through;
