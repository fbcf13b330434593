//! Small text helpers shared by the parser, the fixes and the outputs: where a line starts, lone
//! carriage returns, and message pieces (integers, quoted names) written straight into a `String`.

/// The offset where the line holding `pos` starts.
pub fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// Whether the text has a carriage return not followed by a line feed (an old Mac line break,
/// which line-based output and edits would misplace).
pub fn has_lone_cr(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter()
        .enumerate()
        .any(|(i, &c)| c == b'\r' && b.get(i + 1) != Some(&b'\n'))
}

/// Append an integer's decimal digits, as `{}` prints them.
pub fn push_int(s: &mut String, n: impl itoa::Integer) {
    s.push_str(itoa::Buffer::new().format(n));
}

/// Append `s` as `{:?}` prints it.
pub fn push_debug(out: &mut String, s: &str) {
    // Printable ASCII other than `"` and `\` is printed as it is, between quotes; anything else
    // goes to the formatter, which knows Rust's escapes.
    let plain = |b: u8| (b.is_ascii_graphic() || b == b' ') && b != b'"' && b != b'\\';
    if s.bytes().all(plain) {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        use std::fmt::Write;
        let _ = write!(out, "{s:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_names_read_as_debug_prints_them() {
        let mut names: Vec<String> = (0u8..0x80)
            .map(|b| format!("app{}x", char::from(b)))
            .collect();
        names.extend(["", "api", "é", "a\u{301}", "\u{2028}", "😀", "it's"].map(String::from));
        for n in names {
            let mut s = String::from("x");
            push_debug(&mut s, &n);
            assert_eq!(s, format!("x{n:?}"));
        }
    }

    #[test]
    fn integers_read_as_display_prints_them() {
        for n in [i128::MIN, -1_000_000_007, -1, 0, 7, 1 << 40, i128::MAX] {
            let mut s = String::from("x");
            push_int(&mut s, n);
            assert_eq!(s, format!("x{n}"));
        }
    }
}
