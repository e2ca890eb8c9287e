//! A list as `kubectl get` prints it: the API server's `meta.k8s.io/v1` Table (the CRD's
//! printer columns), its priority-0 columns, upper-cased headers, `date` cells as ages.

use anyhow::Context as _;
use serde_json::Value;

/// What kubectl asks for.
const ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// The lines `kubectl get` prints for the list at `path`.
pub(crate) async fn get(client: &kube::Client, path: &str) -> anyhow::Result<Vec<String>> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, ACCEPT)
        .body(Vec::new())
        .context("a Table request")?;
    let text = client
        .request_text(request)
        .await
        .with_context(|| format!("GET {path} as a Table"))?;
    let table: Value = serde_json::from_str(&text).context("the Table")?;
    if table["kind"] != "Table" {
        anyhow::bail!(
            "GET {path}: the server answered {} rather than a Table",
            table["kind"]
        );
    }
    Ok(render(&table, now_seconds()))
}

fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The table's lines at `now` (seconds since the epoch).
fn render(table: &Value, now: i64) -> Vec<String> {
    let columns: Vec<(usize, &Value)> = table["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, c)| c["priority"].as_i64().unwrap_or(0) == 0)
        .collect();
    let mut rows: Vec<Vec<String>> = vec![
        columns
            .iter()
            .map(|(_, c)| c["name"].as_str().unwrap_or_default().to_uppercase())
            .collect(),
    ];
    for row in table["rows"].as_array().into_iter().flatten() {
        rows.push(
            columns
                .iter()
                .map(|(i, c)| cell(&row["cells"][*i], c["type"].as_str(), now))
                .collect(),
        );
    }
    let widths: Vec<usize> = (0..columns.len())
        .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|row| {
            let padded: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(text, width)| format!("{text:<width$}"))
                .collect();
            padded.join("   ").trim_end().to_owned()
        })
        .collect()
}

/// One cell as kubectl prints it: blank for none, a `date` as its age.
fn cell(value: &Value, type_: Option<&str>, now: i64) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) if type_ == Some("date") => {
            seconds_since_epoch(text).map_or_else(|| text.clone(), |at| age(now - at))
        }
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// An RFC 3339 UTC timestamp (`2026-12-03T14:00:00Z`) in seconds since the epoch.
fn seconds_since_epoch(text: &str) -> Option<i64> {
    let time: k8s_openapi::jiff::Timestamp = text.parse().ok()?;
    Some(time.as_second())
}

/// kubectl's human duration, for the ranges a demo reaches.
fn age(seconds: i64) -> String {
    let seconds = seconds.max(0);
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 600 && s % 60 != 0 => format!("{}m{}s", s / 60, s % 60),
        s if s < 3 * 3600 => format!("{}m", s / 60),
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_table_prints_its_priority_zero_columns_with_blanks_for_missing_cells_and_ages() {
        let table = json!({"kind": "Table",
            "columnDefinitions": [
                {"name": "Name", "type": "string", "priority": 0},
                {"name": "Ready", "type": "string", "priority": 0},
                {"name": "Detail", "type": "string", "priority": 1},
                {"name": "Domain", "type": "string", "priority": 0},
                {"name": "Age", "type": "date", "priority": 0}],
            "rows": [
                {"cells": ["corp-ldap", "True", "x", "corp", "2026-12-03T14:00:00Z"]},
                {"cells": ["other", null, "y", "a-longer-domain", "2026-12-03T13:57:55Z"]}]});
        let now = seconds_since_epoch("2026-12-03T14:00:07Z").expect("a time");
        assert_eq!(
            render(&table, now),
            [
                "NAME        READY   DOMAIN            AGE",
                "corp-ldap   True    corp              7s",
                "other               a-longer-domain   2m12s",
            ]
        );
    }
}
