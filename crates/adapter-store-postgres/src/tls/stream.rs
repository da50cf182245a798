//! tokio-postgres's TLS traits on tokio-rustls: [`MakeRustls`] makes one [`RustlsConnect`]
//! per connection attempt, whose handshake yields a [`RustlsStream`].

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};
use tokio_rustls::TlsConnector;

use super::channel_binding;

/// The TLS connector of a store: its pool and its LISTEN connection share one.
#[derive(Clone)]
pub(crate) struct MakeRustls {
    config: Arc<ClientConfig>,
}

impl MakeRustls {
    pub(crate) fn new(config: ClientConfig) -> MakeRustls {
        MakeRustls {
            config: Arc::new(config),
        }
    }
}

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, host: &str) -> Result<RustlsConnect, io::Error> {
        // Called for Unix sockets too (with no host), where no TLS follows: the name is
        // checked at the handshake.
        Ok(RustlsConnect {
            host: host.to_string(),
            connector: TlsConnector::from(Arc::clone(&self.config)),
        })
    }
}

pub(crate) struct RustlsConnect {
    host: String,
    connector: TlsConnector,
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let name = ServerName::try_from(self.host.as_str())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?
                .to_owned();
            let stream = self.connector.connect(name, stream).await?;
            Ok(RustlsStream(stream))
        })
    }
}

pub(crate) struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S> TlsStream for RustlsStream<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    /// `tls-server-end-point` (RFC 5929): the hash of the server's certificate, for
    /// SCRAM-SHA-256-PLUS; none when its signature algorithm names no hash (Ed25519,
    /// RSA-PSS), and SCRAM then goes without channel binding.
    fn channel_binding(&self) -> ChannelBinding {
        let (_, session) = self.0.get_ref();
        session
            .peer_certificates()
            .and_then(|certificates| certificates.first())
            .and_then(|certificate| channel_binding::server_end_point(certificate))
            .map_or_else(ChannelBinding::none, ChannelBinding::tls_server_end_point)
    }
}

impl<S> AsyncRead for RustlsStream<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S> AsyncWrite for RustlsStream<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
