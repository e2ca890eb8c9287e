//! The operator under its own RBAC: the end-to-end suites run it as a ServiceAccount bound
//! to exactly what `wasm-operator rbac` prints for its plugins, never as the admin (see
//! [`wasm_operator::cli::operator_account`]).

use wasm_operator::cli::operator_account;
use wasm_operator::operator::OperatorConfig;
use wasm_operator_apiserver::ApiServer;
use wasm_operator_runtime::Runtime;

/// A client of `server` as the operator's ServiceAccount, granted its RBAC for `config`.
pub async fn operator_client(
    server: &ApiServer,
    runtime: &Runtime,
    config: &OperatorConfig,
) -> kube::Client {
    operator_account::operator_client(server, runtime, config)
        .await
        .unwrap_or_else(|e| panic!("the operator's ServiceAccount is set up: {e:#}"))
}

/// Grants the operator's ServiceAccount the RBAC of `config`'s plugins as they are now.
pub async fn grant(server: &ApiServer, runtime: &Runtime, config: &OperatorConfig) {
    operator_account::grant(server, runtime, config)
        .await
        .unwrap_or_else(|e| panic!("the operator's RBAC is granted: {e:#}"));
}
