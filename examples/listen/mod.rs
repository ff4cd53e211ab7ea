//! The listening address of the HTTP examples (`examples/http_server.rs`,
//! `examples/apps.rs`): loopback only, as an example server should be.

use std::net::SocketAddr;

/// `raw`, a port or an `ip:port`, as a loopback address; a non-loopback one is refused.
pub fn loopback_addr(raw: &str) -> Result<SocketAddr, String> {
    let addr = match raw.parse::<u16>() {
        Ok(port) => SocketAddr::from(([127, 0, 0, 1], port)),
        Err(_) => raw
            .parse::<SocketAddr>()
            .map_err(|e| format!("bad address {raw:?}: {e} (want a port or ip:port)"))?,
    };
    if !addr.ip().is_loopback() {
        return Err(format!(
            "refusing to listen on {addr}: this example serves loopback only"
        ));
    }
    Ok(addr)
}
