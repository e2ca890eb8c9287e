//! The CEL environment of CRD validation rules: the standard library (its `matches` with
//! RE2's classes and compiled patterns kept), cel-go's strings extension, optional types, and the Kubernetes libraries a rule may call —
//! lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), regex (`find`,
//! `findAll`), sets (`sets.contains`, `sets.equivalent`, `sets.intersects`) and URLs
//! (`url`, `isURL`, `getScheme`, `getHost`, `getHostname`, `getPort`, `getEscapedPath`,
//! `getQuery`).
//! `url(s)` checks `s` and returns it as a string, so the `get*` accessors are string
//! members.
//!
//! Not provided, so a rule calling them does not compile ([`super::check`]): `quantity`,
//! `ip`/`cidr`, `format.*`, `semver`, `authorizer`.

use std::sync::{Arc, LazyLock};

use cel::common::types::{DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError, Value};

/// The one environment every rule compiles and runs in.
pub(crate) fn env() -> Arc<Env> {
    static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(build()));
    ENV.clone()
}

fn build() -> Env {
    let mut env = Env::stdlib();
    // The extensions and overloads below are fixed; a clash is a programming error caught
    // by this module's tests, and the environment is still usable without the one refused.
    let _ = env.add_extension(cel::extensions::strings);
    let member: [(&str, &str, Vec<Type>, cel::common::functions::Function); 12] = [
        ("isSorted", "list_is_sorted", vec![], is_sorted),
        ("sum", "list_sum", vec![], sum),
        ("min", "list_min", vec![], min),
        ("max", "list_max", vec![], max),
        ("indexOf", "list_index_of", vec![DYN_TYPE], index_of),
        (
            "lastIndexOf",
            "list_last_index_of",
            vec![DYN_TYPE],
            last_index_of,
        ),
        ("getScheme", "url_get_scheme", vec![], url_scheme),
        ("getHost", "url_get_host", vec![], url_host),
        ("getHostname", "url_get_hostname", vec![], url_hostname),
        ("getPort", "url_get_port", vec![], url_port),
        ("getEscapedPath", "url_get_escaped_path", vec![], url_path),
        ("getQuery", "url_get_query", vec![], url_query),
    ];
    for (name, id, args, function) in member {
        let target = if id.starts_with("url_") {
            STRING_TYPE
        } else {
            LIST_TYPE
        };
        let _ = env.add_member_overload(name, id, target, args, function);
    }
    // `matches` with RE2's meaning of `\d \w \s \b` and a compiled-pattern cache (the
    // crate's own compiles the pattern on every call).
    let _ = env.add_overload(
        "matches",
        "matches",
        vec![STRING_TYPE, STRING_TYPE],
        matches,
    );
    let _ = env.add_member_overload(
        "matches",
        "matches_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        matches,
    );
    let _ = env.add_member_overload("find", "string_find", STRING_TYPE, vec![STRING_TYPE], find);
    let _ = env.add_member_overload(
        "findAll",
        "string_find_all",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    );
    let _ = env.add_member_overload(
        "findAll",
        "string_find_all_n",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all,
    );
    let global: [(&str, &str, Vec<Type>, cel::common::functions::Function); 5] = [
        (
            "sets.contains",
            "sets_contains",
            vec![LIST_TYPE, LIST_TYPE],
            sets_contains,
        ),
        (
            "sets.equivalent",
            "sets_equivalent",
            vec![LIST_TYPE, LIST_TYPE],
            sets_equivalent,
        ),
        (
            "sets.intersects",
            "sets_intersects",
            vec![LIST_TYPE, LIST_TYPE],
            sets_intersects,
        ),
        ("url", "string_to_url", vec![STRING_TYPE], to_url),
        ("isURL", "is_url_string", vec![STRING_TYPE], is_url),
    ];
    for (name, id, args, function) in global {
        let _ = env.add_overload(name, id, args, function);
    }
    env
}

/// The arguments as plain values.
fn values(args: &[CowVal<'_, '_>]) -> Result<Vec<Value>, ExecutionError> {
    args.iter().map(|a| Value::try_from(&**a)).collect()
}

fn owned<'b, 'v>(value: Value) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let boxed: Box<dyn Val> = Box::try_from(value)?;
    Ok(CowVal::Owned(boxed))
}

fn list_of(value: &Value, function: &str) -> Result<Arc<Vec<Value>>, ExecutionError> {
    match value {
        Value::List(items) => Ok(items.clone()),
        other => Err(ExecutionError::no_such_member_overload(
            function,
            vec![other.type_of().to_string()],
        )),
    }
}

fn string_of(value: &Value, function: &str) -> Result<Arc<String>, ExecutionError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        other => Err(ExecutionError::no_such_member_overload(
            function,
            vec![other.type_of().to_string()],
        )),
    }
}

fn ordering(a: &Value, b: &Value) -> Result<std::cmp::Ordering, ExecutionError> {
    a.partial_cmp(b)
        .ok_or_else(|| ExecutionError::ValuesNotComparable(a.clone(), b.clone()))
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let items = list_of(&args[0], "isSorted")?;
    for pair in items.windows(2) {
        if ordering(&pair[0], &pair[1])?.is_gt() {
            return owned(Value::Bool(false));
        }
    }
    owned(Value::Bool(true))
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let items = list_of(&args[0], "sum")?;
    let mut total = match items.first() {
        Some(Value::Float(_)) => Value::Float(0.0),
        Some(Value::UInt(_)) => Value::UInt(0),
        _ => Value::Int(0),
    };
    for item in items.iter() {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => a
                .checked_add(*b)
                .map(Value::Int)
                .ok_or_else(|| ExecutionError::Overflow("+", total.clone(), item.clone()))?,
            (Value::UInt(a), Value::UInt(b)) => a
                .checked_add(*b)
                .map(Value::UInt)
                .ok_or_else(|| ExecutionError::Overflow("+", total.clone(), item.clone()))?,
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            _ => {
                return Err(ExecutionError::no_such_overload(
                    "sum",
                    vec![item.type_of().to_string()],
                ));
            }
        };
    }
    owned(total)
}

fn extreme<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    function: &str,
    keep: std::cmp::Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let items = list_of(&args[0], function)?;
    let mut best = items.first().cloned().ok_or_else(|| {
        ExecutionError::function_error(function, format!("{function} called on empty list"))
    })?;
    for item in items.iter().skip(1) {
        if ordering(item, &best)? == keep {
            best = item.clone();
        }
    }
    owned(best)
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "min", std::cmp::Ordering::Less)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "max", std::cmp::Ordering::Greater)
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let items = list_of(&args[0], "indexOf")?;
    let found = items.iter().position(|v| v == &args[1]);
    owned(Value::Int(found.map_or(-1, |i| i as i64)))
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let items = list_of(&args[0], "lastIndexOf")?;
    let found = items.iter().rposition(|v| v == &args[1]);
    owned(Value::Int(found.map_or(-1, |i| i as i64)))
}

/// A pattern compiled once (the schema validation's cache), as RE2 reads it.
fn regex_of(pattern: &str, function: &str) -> Result<Arc<regex::Regex>, ExecutionError> {
    super::super::validate::compiled_pattern(pattern).map_err(|e| {
        ExecutionError::function_error(function, format!("'{pattern}' not a valid regex:\n{e}"))
    })
}

fn matches<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let text = string_of(&args[0], "matches")?;
    let re = regex_of(&string_of(&args[1], "matches")?, "matches")?;
    owned(Value::Bool(re.is_match(&text)))
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let text = string_of(&args[0], "find")?;
    let re = regex_of(&string_of(&args[1], "find")?, "find")?;
    let found = re
        .find(&text)
        .map(|m| m.as_str().to_owned())
        .unwrap_or_default();
    owned(Value::String(Arc::new(found)))
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let text = string_of(&args[0], "findAll")?;
    let re = regex_of(&string_of(&args[1], "findAll")?, "findAll")?;
    let limit = match args.get(2) {
        Some(Value::Int(n)) if *n >= 0 => *n as usize,
        _ => usize::MAX,
    };
    let found = re
        .find_iter(&text)
        .take(limit)
        .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
        .collect();
    owned(Value::List(Arc::new(found)))
}

/// A CEL list's elements.
type List = Arc<Vec<Value>>;

fn two_lists(args: &[CowVal<'_, '_>], function: &str) -> Result<(List, List), ExecutionError> {
    let args = values(args)?;
    Ok((list_of(&args[0], function)?, list_of(&args[1], function)?))
}

fn sets_contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_lists(&args, "sets.contains")?;
    owned(Value::Bool(b.iter().all(|x| a.contains(x))))
}

fn sets_equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_lists(&args, "sets.equivalent")?;
    owned(Value::Bool(
        b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x)),
    ))
}

fn sets_intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_lists(&args, "sets.intersects")?;
    owned(Value::Bool(b.iter().any(|x| a.contains(x))))
}

/// A URL as Go's `url.Parse` accepts it for Kubernetes' `url()`: an absolute URI with a
/// scheme, or an absolute path.
struct Url<'a> {
    scheme: &'a str,
    host: &'a str,
    path: &'a str,
    query: &'a str,
}

fn parse_url(text: &str) -> Option<Url<'_>> {
    let text = text.split('#').next().unwrap_or_default();
    let (rest, query) = text.split_once('?').unwrap_or((text, ""));
    if rest.starts_with('/') {
        return Some(Url {
            scheme: "",
            host: "",
            path: rest,
            query,
        });
    }
    let (scheme, rest) = rest.split_once(':')?;
    let valid_scheme = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid_scheme || rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let (host, path) = match rest.strip_prefix("//") {
        Some(authority) => {
            let end = authority.find('/').unwrap_or(authority.len());
            let host = &authority[..end];
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            (host, &authority[end..])
        }
        None => ("", rest),
    };
    Some(Url {
        scheme,
        host,
        path,
        query,
    })
}

fn url_arg<'a>(values: &'a [Value], function: &str) -> Result<&'a str, ExecutionError> {
    match values.first() {
        Some(Value::String(s)) => Ok(s.as_str()),
        _ => Err(ExecutionError::no_such_overload(function, vec![])),
    }
}

fn to_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let text = url_arg(&args, "url")?;
    if parse_url(text).is_none() {
        return Err(ExecutionError::function_error(
            "url",
            format!("URL parse error during conversion from string: {text:?}"),
        ));
    }
    owned(Value::String(Arc::new(text.to_owned())))
}

fn is_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    owned(Value::Bool(parse_url(url_arg(&args, "isURL")?).is_some()))
}

fn url_part<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    function: &str,
    part: fn(&Url<'_>) -> Value,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let text = url_arg(&args, function)?;
    let url = parse_url(text)
        .ok_or_else(|| ExecutionError::function_error(function, format!("not a URL: {text:?}")))?;
    owned(part(&url))
}

/// A CEL string.
fn text(s: &str) -> Value {
    Value::String(Arc::new(s.to_owned()))
}

fn url_scheme<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    url_part(args, "getScheme", |u| text(u.scheme))
}

fn url_host<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    url_part(args, "getHost", |u| text(u.host))
}

/// The host without its port and without an IPv6 literal's brackets.
fn hostname(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    host.split(':').next().unwrap_or_default()
}

fn url_hostname<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    url_part(args, "getHostname", |u| text(hostname(u.host)))
}

fn url_port<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    url_part(args, "getPort", |u| {
        let after = u.host.rsplit_once(']').map_or(u.host, |(_, p)| p);
        text(after.rsplit_once(':').map_or("", |(_, port)| port))
    })
}

fn url_path<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    url_part(args, "getEscapedPath", |u| text(u.path))
}

/// The query as a map of each key to its values, in order.
fn url_query<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    url_part(args, "getQuery", |url| {
        let mut query: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
        for pair in url.query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            query.entry(key.to_owned()).or_default().push(text(value));
        }
        let map: std::collections::HashMap<String, Value> = query
            .into_iter()
            .map(|(k, v)| (k, Value::List(Arc::new(v))))
            .collect();
        Value::from(map)
    })
}
