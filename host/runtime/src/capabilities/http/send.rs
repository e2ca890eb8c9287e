//! Sending one allowed request: resolve, connect, TLS, HTTP/1.1, and a capped response body.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http::uri::Scheme;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

use super::{AllowList, EgressEnv, IoFuture, ResolveError, ServiceResolver, capped, tls};

/// The suffix of the Service names the resolver answers.
const SERVICE_SUFFIX: &str = ".svc.cluster.local";
/// The short form of a Service name, `{service}.{namespace}.svc`.
const SHORT_SERVICE_SUFFIX: &str = ".svc";

/// What a pass's requests may do (shared by every request of the pass).
pub(super) struct Policy {
    pub(super) plugin: String,
    pub(super) allow: AllowList,
    /// The ceiling of every timeout, and the timeout the guest leaves unset.
    pub(super) timeout: Duration,
    /// The most bytes of a response body.
    pub(super) max_body: usize,
    pub(super) env: EgressEnv,
}

trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

impl Policy {
    /// Sends `request` if the plugin declared its destination; counts and logs the outcome.
    pub(super) async fn send(
        self: Arc<Self>,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        pass: super::PassEgress,
    ) -> Result<(http::Response<WasiBody>, IoFuture), Error> {
        let uri = request.uri();
        let tls = uri.scheme() == Some(&Scheme::HTTPS);
        let Some(authority) = uri.authority() else {
            return Err(Error::HttpRequestUriInvalid);
        };
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let destination = format!("{host}:{port}");
        if !self.allow.permits(&host, port) {
            tracing::warn!(
                plugin = %self.plugin,
                %destination,
                "HTTP request refused: not a destination the plugin declared"
            );
            self.count(&destination, "refused");
            return Err(Error::HttpRequestDenied);
        }
        let result = self
            .send_allowed(request, options, pass, &host, port, tls)
            .await;
        match &result {
            Ok((response, _)) => {
                tracing::debug!(plugin = %self.plugin, %destination, status = response.status().as_u16(), "HTTP request");
                self.count(&destination, response.status().as_str());
            }
            Err(error) => {
                tracing::info!(plugin = %self.plugin, %destination, error = %error, "HTTP request failed");
                let status = if is_timeout(error) {
                    "timeout"
                } else {
                    "error"
                };
                self.count(&destination, status);
            }
        }
        result
    }

    fn count(&self, destination: &str, status: &str) {
        if let Some(observer) = &self.env.observer {
            observer.request(&self.plugin, destination, status);
        }
    }

    async fn send_allowed(
        &self,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        pass: super::PassEgress,
        host: &str,
        port: u16,
        tls: bool,
    ) -> Result<(http::Response<WasiBody>, IoFuture), Error> {
        let options = options.unwrap_or_default();
        let connect_timeout = capped(options.connect_timeout, self.timeout);
        let first_byte_timeout = capped(options.first_byte_timeout, self.timeout);
        let between_bytes_timeout = capped(options.between_bytes_timeout, self.timeout);
        let connect = async {
            let resolver = pass.services.as_ref().or(self.env.resolver.as_ref());
            let tcp = self.connect(resolver, host, port).await?;
            if !tls {
                return Ok::<_, Error>(Box::new(tcp) as Box<dyn Stream>);
            }
            let config =
                tls::client_config(&pass.trusted).map_err(|m| Error::InternalError(Some(m)))?;
            let name =
                ServerName::try_from(host.to_owned()).map_err(|_| Error::HttpRequestUriInvalid)?;
            let stream = tokio_rustls::TlsConnector::from(Arc::new(config))
                .connect(name, tcp)
                .await
                .map_err(tls_error)?;
            Ok(Box::new(stream) as Box<dyn Stream>)
        };
        let stream = tokio::time::timeout(connect_timeout, connect)
            .await
            .map_err(|_| Error::ConnectionTimeout)??;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(Error::from)?;
        // The request line names the path only (the authority is in the Host header).
        let path = request
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        *request.uri_mut() = http::Uri::try_from(path).map_err(|_| Error::HttpRequestUriInvalid)?;
        let mut conn = Box::pin(conn);
        let send = tokio::time::timeout(first_byte_timeout, sender.send_request(request));
        let mut send = std::pin::pin!(send);
        // Drive the connection while waiting for the response head.
        let response = std::future::poll_fn(|cx| {
            if let Poll::Ready(result) = send.as_mut().poll(cx) {
                return Poll::Ready(result);
            }
            match conn.as_mut().poll(cx) {
                Poll::Ready(Err(e)) => Poll::Ready(Ok(Err(e))),
                _ => Poll::Pending,
            }
        })
        .await
        .map_err(|_| Error::ConnectionReadTimeout)?
        .map_err(Error::from)?;
        if let Some(length) = response
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            && length > self.max_body as u64
        {
            tracing::warn!(plugin = %self.plugin, length, limit = self.max_body, "HTTP response body over the limit");
            return Err(Error::HttpResponseBodySize(Some(length)));
        }
        let max_body = self.max_body;
        let response = response.map(|incoming| {
            CappedBody {
                incoming,
                left: max_body,
                max: max_body,
                between_bytes: between_bytes_timeout,
                timer: Box::pin(tokio::time::sleep(between_bytes_timeout)),
            }
            .boxed_unsync()
        });
        let io: IoFuture = Box::new(async move { conn.await.map_err(Error::from) });
        Ok((response, io))
    }

    /// A TCP connection to `host:port`: a Service name through `resolver` when one is
    /// set, anything else through the system's resolver.
    async fn connect(
        &self,
        resolver: Option<&Arc<dyn ServiceResolver>>,
        host: &str,
        port: u16,
    ) -> Result<TcpStream, Error> {
        let addresses: Vec<SocketAddr> = match (service_name(host), resolver) {
            (Some((service, namespace)), Some(resolver)) => {
                match resolver.resolve(namespace, service, port).await {
                    Ok(addresses) if !addresses.is_empty() => addresses,
                    Ok(_) | Err(ResolveError::NoEndpoints { .. }) => {
                        return Err(Error::ConnectionRefused);
                    }
                    Err(ResolveError::NoService { .. }) => {
                        return Err(Error::DnsError {
                            rcode: Some("NXDOMAIN".into()),
                            info_code: None,
                        });
                    }
                    Err(e @ ResolveError::Lookup { .. }) => {
                        tracing::warn!(plugin = %self.plugin, error = %e, "Service lookup failed");
                        return Err(Error::DestinationUnavailable);
                    }
                }
            }
            _ => tokio::net::lookup_host((host, port))
                .await
                .map_err(|e| Error::DnsError {
                    rcode: Some(e.to_string()),
                    info_code: None,
                })?
                .collect(),
        };
        let mut last = Error::DestinationNotFound;
        for address in addresses {
            match TcpStream::connect(address).await {
                Ok(stream) => return Ok(stream),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    last = Error::ConnectionRefused;
                }
                Err(e) => last = Error::Connect(e),
            }
        }
        Err(last)
    }
}

/// `(service, namespace)` of `{service}.{namespace}.svc.cluster.local`, or of the short
/// `{service}.{namespace}.svc` a Pod's DNS search path resolves the same way.
fn service_name(host: &str) -> Option<(&str, &str)> {
    let rest = host
        .strip_suffix(SERVICE_SUFFIX)
        .or_else(|| host.strip_suffix(SHORT_SERVICE_SUFFIX))?;
    let (service, namespace) = rest.split_once('.')?;
    (!service.is_empty() && !namespace.is_empty() && !namespace.contains('.'))
        .then_some((service, namespace))
}

fn tls_error(e: std::io::Error) -> Error {
    let certificate = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|r| {
            matches!(
                r,
                rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented
            )
        });
    if certificate {
        Error::TlsCertificateError
    } else {
        Error::Tls(e)
    }
}

fn is_timeout(error: &Error) -> bool {
    matches!(
        error,
        Error::ConnectionTimeout
            | Error::ConnectionReadTimeout
            | Error::ConnectionWriteTimeout
            | Error::HttpResponseTimeout
            | Error::DnsTimeout
    )
}

/// A response body that fails past `max` bytes or when `between_bytes` pass without a
/// frame.
struct CappedBody {
    incoming: hyper::body::Incoming,
    left: usize,
    max: usize,
    between_bytes: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl Body for CappedBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        match Pin::new(&mut self.incoming).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let len = frame.data_ref().map_or(0, Bytes::len);
                if len > self.left {
                    let max = self.max as u64;
                    self.left = 0;
                    return Poll::Ready(Some(Err(Error::HttpResponseBodySize(Some(max + 1)))));
                }
                self.left -= len;
                let deadline = tokio::time::Instant::now() + self.between_bytes;
                self.timer.as_mut().reset(deadline);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Error::from(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                ready!(self.timer.as_mut().poll(cx));
                Poll::Ready(Some(Err(Error::ConnectionReadTimeout)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.incoming.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.incoming.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::service_name;

    #[test]
    fn a_service_name_is_service_dot_namespace_dot_svc_with_or_without_cluster_local() {
        for name in [
            "keystone.openstack.svc.cluster.local",
            "keystone.openstack.svc",
        ] {
            assert_eq!(
                service_name(name),
                Some(("keystone", "openstack")),
                "{name}"
            );
        }
        for other in [
            "openstack.svc.cluster.local",
            "a.b.c.svc.cluster.local",
            "openstack.svc",
            "a.b.c.svc",
            "keystone.openstack.svc.evil.com",
            "example.com",
        ] {
            assert_eq!(service_name(other), None, "{other}");
        }
    }
}
