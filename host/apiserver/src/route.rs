//! Request routing: which resource, namespace, name and subresource a path names, and the
//! query parameters.

use std::collections::HashMap;

use crate::registry::{Registry, ResourceType};
use crate::status::ApiError;

/// What a resource path names.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub rt: ResourceType,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// A path the server answers.
#[derive(Debug)]
pub(crate) enum Route {
    Version,
    Health,
    ApiVersions,
    ApiGroups,
    Resources {
        group: String,
        version: String,
    },
    OpenApiV2,
    OpenApiV3,
    OpenApiV3Group {
        group: String,
        version: String,
    },
    /// The key set that verifies ServiceAccount tokens.
    Jwks,
    Resource(Box<Target>),
}

/// Routes `path`; `Err` for a path the server does not serve.
pub(crate) fn route(registry: &Registry, path: &str) -> Result<Route, ApiError> {
    let segments: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let (group, version, rest) = match segments.as_slice() {
        ["version"] => return Ok(Route::Version),
        ["healthz" | "readyz" | "livez", ..] => return Ok(Route::Health),
        ["openapi", "v2"] => return Ok(Route::OpenApiV2),
        ["openid", "v1", "jwks"] => return Ok(Route::Jwks),
        ["openapi", "v3"] => return Ok(Route::OpenApiV3),
        ["openapi", "v3", "api", version] => {
            return Ok(Route::OpenApiV3Group {
                group: String::new(),
                version: (*version).into(),
            });
        }
        ["openapi", "v3", "apis", group, version] => {
            return Ok(Route::OpenApiV3Group {
                group: (*group).into(),
                version: (*version).into(),
            });
        }
        ["api"] => return Ok(Route::ApiVersions),
        ["apis"] => return Ok(Route::ApiGroups),
        ["api", version] => {
            return Ok(Route::Resources {
                group: String::new(),
                version: (*version).into(),
            });
        }
        ["apis", group, version] => {
            return Ok(Route::Resources {
                group: (*group).into(),
                version: (*version).into(),
            });
        }
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Err(ApiError::no_route(path)),
    };
    let not_found = || ApiError::no_route(path);
    // /namespaces/{ns}/{plural}[/{name}[/{sub}]] for namespaced kinds ...
    if let ["namespaces", namespace, plural, tail @ ..] = rest
        && let Some(rt) = registry
            .find(group, version, plural)
            .filter(|rt| rt.namespaced)
        && tail.len() <= 2
    {
        return Ok(Route::Resource(Box::new(Target {
            rt: rt.clone(),
            namespace: Some((*namespace).into()),
            name: tail.first().map(|s| (*s).into()),
            subresource: tail.get(1).map(|s| (*s).into()),
        })));
    }
    // ... else /{plural}[/{name}[/{sub}]]: cluster-scoped kinds, or a namespaced kind listed
    // across namespaces.
    let [plural, tail @ ..] = rest else {
        return Err(not_found());
    };
    let rt = registry
        .find(group, version, plural)
        .ok_or_else(not_found)?;
    if tail.len() > 2 || (rt.namespaced && !tail.is_empty()) {
        return Err(not_found());
    }
    Ok(Route::Resource(Box::new(Target {
        rt: rt.clone(),
        namespace: None,
        name: tail.first().map(|s| (*s).into()),
        subresource: tail.get(1).map(|s| (*s).into()),
    })))
}

/// The query parameters of a request, and whether a test hook lets its object skip
/// kube-apiserver's metadata and data validation (no query can ask for that).
#[derive(Debug, Clone, Default)]
pub(crate) struct Params {
    query: HashMap<String, String>,
    unvalidated: bool,
}

impl Params {
    /// Parses a query string.
    pub(crate) fn parse(query: Option<&str>) -> Self {
        Self {
            query: form_urlencoded::parse(query.unwrap_or_default().as_bytes())
                .into_owned()
                .collect(),
            unvalidated: false,
        }
    }

    /// These parameters, the write stored without the built-in validation
    /// ([`FaultAction::StoreUnvalidated`](crate::FaultAction::StoreUnvalidated)).
    pub(crate) fn unvalidated(mut self) -> Self {
        self.unvalidated = true;
        self
    }

    /// Whether the write skips the built-in validation.
    pub(crate) fn skips_validation(&self) -> bool {
        self.unvalidated
    }

    /// One parameter.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.query
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A boolean parameter (`true`/`1`).
    pub(crate) fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }

    /// `dryRun=All`.
    pub(crate) fn dry_run(&self) -> bool {
        self.get("dryRun") == Some("All")
    }
}
