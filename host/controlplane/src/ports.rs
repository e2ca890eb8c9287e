//! The loopback ports of the components: free ones, or the one the user asked for.

use std::net::{Ipv4Addr, TcpListener};

use crate::Error;

/// One port per listener of the control plane.
pub(crate) struct Ports {
    pub(crate) etcd_client: u16,
    pub(crate) etcd_peer: u16,
    pub(crate) apiserver: u16,
    pub(crate) controller_manager: u16,
    pub(crate) scheduler: u16,
    pub(crate) kwok: u16,
}

impl Ports {
    /// Free ports, all different; `apiserver` when not 0 must be free.
    pub(crate) fn pick(apiserver: u16) -> Result<Self, Error> {
        // Every listener is held until all ports are picked, so no two are the same.
        let mut held = Vec::new();
        let mut take = |component: &'static str, port: u16| -> Result<u16, Error> {
            let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).map_err(|source| {
                if port == 0 {
                    Error::Io {
                        what: format!("{component}: no free port on 127.0.0.1"),
                        source,
                    }
                } else {
                    Error::PortInUse {
                        component,
                        port,
                        source,
                    }
                }
            })?;
            let port = listener
                .local_addr()
                .map_err(Error::io("a listener's address"))?
                .port();
            held.push(listener);
            Ok(port)
        };
        Ok(Self {
            apiserver: take("kube-apiserver", apiserver)?,
            etcd_client: take("etcd", 0)?,
            etcd_peer: take("etcd", 0)?,
            controller_manager: take("kube-controller-manager", 0)?,
            scheduler: take("kube-scheduler", 0)?,
            kwok: take("kwok", 0)?,
        })
    }
}
