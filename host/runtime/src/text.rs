//! Text a guest hands the host — panic messages, errors, trap descriptions, log lines,
//! event notes — made safe to show: control characters and bidirectional-text controls
//! escaped (so a guest cannot colour a terminal, forge a log line or hide text), and the
//! length capped with a marker naming what was cut.

/// The longest guest text the host passes on in an error, a condition or an event: the
/// 1 KiB limit of an Event's note.
pub const GUEST_TEXT_MAX: usize = 1024;

/// Room kept for the cut marker `… (N bytes cut)`.
const MARKER_ROOM: usize = 40;

/// `text` with every control character and bidirectional-text control escaped the way Rust
/// writes them (`\n`, `\u{1b}`), cut to at most `max` bytes (marker included; `max` of at
/// least 64) on a character boundary.
pub fn escape(text: &str, max: usize) -> String {
    let max = max.max(MARKER_ROOM + 24);
    if let Some(all) = escaped_within(text, max) {
        return all;
    }
    let room = max - MARKER_ROOM;
    let mut out = String::with_capacity(room + MARKER_ROOM);
    let mut shown = 0;
    for (at, c) in text.char_indices() {
        let before = out.len();
        push_escaped(&mut out, c);
        if out.len() > room {
            out.truncate(before);
            break;
        }
        shown = at + c.len_utf8();
    }
    out.push_str(&format!("… ({} bytes cut)", text.len() - shown));
    out
}

/// `text` escaped, if that fits in `max` bytes.
fn escaped_within(text: &str, max: usize) -> Option<String> {
    let mut out = String::with_capacity(text.len().min(max));
    for c in text.chars() {
        push_escaped(&mut out, c);
        if out.len() > max {
            return None;
        }
    }
    Some(out)
}

fn push_escaped(out: &mut String, c: char) {
    if needs_escape(c) {
        out.extend(c.escape_debug());
    } else {
        out.push(c);
    }
}

/// [`escape`] to [`GUEST_TEXT_MAX`].
pub fn guest_text(text: &str) -> String {
    escape(text, GUEST_TEXT_MAX)
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn control_characters_are_escaped_and_plain_text_is_kept() {
        assert_eq!(escape("ab äö", 100), "ab äö");
        assert_eq!(
            escape("\u{1b}[31mred\nnext\r\u{202e}", 100),
            r"\u{1b}[31mred\nnext\r\u{202e}"
        );
    }

    #[test]
    fn long_text_is_cut_within_the_limit_on_a_character_boundary() {
        let long = "ä".repeat(1000);
        let cut = escape(&long, 100);
        assert!(cut.len() <= 100, "{}", cut.len());
        assert!(cut.starts_with("ää"));
        assert!(cut.ends_with(" bytes cut)"), "{cut}");
        let escaped = escape(&"\n".repeat(1000), 100);
        assert!(escaped.len() <= 100, "{}", escaped.len());
        assert!(escaped.starts_with(r"\n\n"), "{escaped}");
    }
}
