//! The benchmark report: sections of tables, written as Markdown and as JSON.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

/// Summary statistics of repeated measurements.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    /// How many samples.
    pub n: usize,
    /// Median, in milliseconds.
    pub median_ms: f64,
    /// Fastest, in milliseconds.
    pub min_ms: f64,
    /// Slowest, in milliseconds.
    pub max_ms: f64,
}

impl Stats {
    /// The statistics of `samples`; `None` when there are none.
    pub fn of(samples: &[Duration]) -> Option<Self> {
        let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        let n = ms.len();
        let median = match n {
            0 => return None,
            n if n % 2 == 1 => ms[n / 2],
            n => (ms[n / 2 - 1] + ms[n / 2]) / 2.0,
        };
        Some(Self {
            n,
            median_ms: median,
            min_ms: ms[0],
            max_ms: ms[n - 1],
        })
    }

    /// The median as a duration.
    pub fn median(&self) -> Duration {
        Duration::from_secs_f64(self.median_ms / 1e3)
    }
}

/// One value of a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// Repeated timings.
    Time(Stats),
    /// A number with its unit.
    Number { value: f64, unit: String },
    /// Text.
    Text(String),
}

impl Cell {
    /// A number with its unit (`"/s"`, `"MiB"`, `"×"` …).
    pub fn number(value: f64, unit: &str) -> Self {
        Self::Number {
            value,
            unit: unit.to_owned(),
        }
    }

    /// A ratio `a / b` (`×`), or text saying why there is none.
    pub fn ratio(a: f64, b: f64) -> Self {
        if b > 0.0 && a.is_finite() {
            Self::number(a / b, "×")
        } else {
            Self::Text("n/a".into())
        }
    }

    /// Timings; "no sample" when there are none.
    pub fn time(samples: &[Duration]) -> Self {
        Stats::of(samples).map_or_else(|| Self::Text("no sample".into()), Self::Time)
    }

    fn markdown(&self) -> String {
        match self {
            Self::Time(s) if s.n == 1 => millis(s.median_ms),
            Self::Time(s) => format!(
                "{} ({}–{}, n={})",
                millis(s.median_ms),
                millis(s.min_ms),
                millis(s.max_ms),
                s.n
            ),
            Self::Number { value, unit } if unit == "×" => format!("{value:.2}×"),
            Self::Number { value, unit } => format!("{} {unit}", number(*value)),
            Self::Text(text) => text.clone(),
        }
    }
}

fn millis(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1e3)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else if ms >= 0.1 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.1} µs", ms * 1e3)
    }
}

fn number(value: f64) -> String {
    if value.fract() == 0.0 || value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// One scenario's table, with notes on how to read it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    /// The scenario's id (`wasm-native`, `boundary` …).
    pub id: String,
    /// Its heading.
    pub title: String,
    /// Column headings; the first names the row.
    pub columns: Vec<String>,
    /// Rows: a name, then one cell per further column.
    pub rows: Vec<(String, Vec<Cell>)>,
    /// What the figures mean, what was measured and how.
    pub notes: Vec<String>,
}

impl Section {
    /// An empty table with these columns.
    pub fn new(id: &str, title: &str, columns: &[&str]) -> Self {
        Self {
            id: id.to_owned(),
            title: title.to_owned(),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn row(&mut self, name: impl Into<String>, cells: Vec<Cell>) {
        self.rows.push((name.into(), cells));
    }

    /// Adds a note.
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// The cell of row `row` under column `column`, if both exist.
    pub fn cell(&self, row: &str, column: &str) -> Option<&Cell> {
        let index = self
            .columns
            .iter()
            .position(|c| c == column)?
            .checked_sub(1)?;
        self.rows
            .iter()
            .find(|(name, _)| name == row)
            .and_then(|(_, cells)| cells.get(index))
    }

    /// Appends the section as Markdown to `out`.
    pub fn markdown_into(&self, out: &mut String) {
        let _ = writeln!(out, "## {}\n", self.title);
        let _ = writeln!(out, "| {} |", self.columns.join(" | "));
        let _ = writeln!(
            out,
            "|{}",
            self.columns.iter().map(|_| "---|").collect::<String>()
        );
        for (name, cells) in &self.rows {
            let cells: Vec<String> = cells.iter().map(Cell::markdown).collect();
            let _ = writeln!(out, "| {name} | {} |", cells.join(" | "));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for note in &self.notes {
                let _ = writeln!(out, "- {note}");
            }
        }
        out.push('\n');
    }
}

/// The whole report: where it ran and one section per scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The machine and build it ran on.
    pub environment: Value,
    /// The scenarios, in the order they ran.
    pub sections: Vec<Section>,
}

impl Report {
    /// The report as Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::from("# wasm-operator benchmarks\n\n");
        if let Some(env) = self.environment.as_object() {
            for (key, value) in env {
                let value = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned);
                let _ = writeln!(out, "- {key}: {value}");
            }
            out.push('\n');
        }
        out.push_str(
            "Times are median (min–max, n=samples). Ratios compare two runs on the same \
             machine in the same process, which is what stays meaningful on a shared machine.\n\n",
        );
        for section in &self.sections {
            section.markdown_into(&mut out);
        }
        out
    }

    /// Writes `report.md` and `report.json` into `dir`; returns their paths.
    pub fn write(&self, dir: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
        std::fs::create_dir_all(dir)?;
        let markdown = dir.join("report.md");
        let json = dir.join("report.json");
        std::fs::write(&markdown, self.markdown())?;
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&json, text)?;
        Ok((markdown, json))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_take_the_median_of_odd_and_even_counts() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|m| Duration::from_millis(*m))
                .collect::<Vec<_>>()
        };
        let odd = Stats::of(&ms(&[5, 1, 3])).expect("samples");
        assert_eq!(
            (odd.median_ms, odd.min_ms, odd.max_ms, odd.n),
            (3.0, 1.0, 5.0, 3)
        );
        let even = Stats::of(&ms(&[4, 1, 2, 3])).expect("samples");
        assert_eq!(even.median_ms, 2.5);
        assert_eq!(Stats::of(&[]), None);
    }

    #[test]
    fn a_section_renders_as_a_markdown_table_with_its_notes() {
        let mut section = Section::new("x", "Example", &["measure", "wasm", "ratio"]);
        section.row(
            "pass",
            vec![
                Cell::time(&[Duration::from_micros(1500), Duration::from_micros(2500)]),
                Cell::ratio(3.0, 2.0),
            ],
        );
        section.note("read me");
        let mut out = String::new();
        section.markdown_into(&mut out);
        assert!(out.contains("| measure | wasm | ratio |"), "{out}");
        assert!(
            out.contains("| pass | 2.00 ms (1.50 ms–2.50 ms, n=2) | 1.50× |"),
            "{out}"
        );
        assert!(out.contains("- read me"), "{out}");
        assert_eq!(section.cell("pass", "ratio"), Some(&Cell::number(1.5, "×")));
        assert_eq!(Cell::ratio(1.0, 0.0), Cell::Text("n/a".into()));
    }
}
