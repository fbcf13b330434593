//! YAML 1.1 resolution of plain scalars, as kubectl and Helm perform it.
//!
//! kubectl, Helm and Argo CD turn a manifest into JSON with `sigs.k8s.io/yaml`, which decodes
//! YAML with go-yaml v2 (vendored as `goyaml.v2` in v1.4.0, and taken from `go.yaml.in/yaml/v2`
//! v2.4.2 in v1.5.0 and v1.6.0; the resolver is the same in all three). go-yaml v2 follows
//! YAML 1.1, so an unquoted `off` reaches the API server as the JSON boolean `false` and `0100`
//! as the integer `64`. A YAML 1.2 parser would read `off` as a string and `0100` as 100, so the
//! linter cannot trust its own parser's idea of a scalar's type. It must replay go-yaml v2's
//! resolver to know what the API server really receives, for example for an env `value`, which
//! the server rejects unless it is a JSON string.
//!
//! The resolver's order matters and is kept exactly:
//! 1. An exact-spelling table (booleans, nulls, `.inf`, `.nan`, `<<`), consulted only when the
//!    first byte could start such a word or a number.
//! 2. Text starting with `.`: Go's `strconv.ParseFloat` on the raw text.
//! 3. Text starting with a digit or a sign: all `_` removed, then `strconv.ParseInt` (base 0,
//!    so Go's `0x`/`0o`/`0b` prefixes and a leading `0` for octal), then `strconv.ParseUint`,
//!    then a strict decimal-float pattern checked with `strconv.ParseFloat`, then a `0b`
//!    fallback that goes through Go's explicit-base parser.
//! 4. Everything else is a string. go-yaml v2 deliberately has no sexagesimal (`1:30`) numbers
//!    and no `=` value key.

/// The JSON type go-yaml v2 plus `sigs.k8s.io/yaml` give an untagged plain scalar.
#[derive(Debug, Clone, PartialEq)]
pub enum Yaml11 {
    Null,
    Bool(bool),
    /// Anything go-yaml resolves to Go `int`, `int64` or `uint64`: the range is
    /// `-2^63 ..= 2^64-1`, which `i128` holds without a sign/width split.
    Int(i128),
    Float(f64),
    /// Stays a string (timestamps included: see `resolve_numeric`).
    Str,
}

/// Resolve an untagged plain scalar's text (as written in the source, after YAML's plain-scalar
/// line folding).
///
/// Never panics, whatever the input: the linter feeds it every scalar of untrusted files.
pub fn resolve_plain(text: &str) -> Yaml11 {
    let hint = match text.as_bytes().first() {
        // go-yaml gives the empty scalar its own hint so that the table lookup below runs and
        // finds the null entry for "".
        None => Hint::Word,
        Some(&b) => match Hint::of(b) {
            Some(h) => h,
            None => return Yaml11::Str,
        },
    };
    if let Some(v) = exact_word(text) {
        return v;
    }
    match hint {
        Hint::Word => Yaml11::Str,
        // No `_` stripping on this path in go-yaml: Go's float parser itself accepts `_`
        // between digits, so `.5_0` is 0.5 while `._5` stays a string.
        Hint::Dot => go_parse_decimal_float(text).map_or(Yaml11::Str, Yaml11::Float),
        // Quantities (`512Mi`, `500m`, `2G`) are most of the numeric-looking text in a
        // manifest. None of these letters is a digit in any base Go's integer parsers accept
        // here (at most hexadecimal), an exponent or a base prefix, and the float syntax ends
        // in a digit or a dot, so every parser below would refuse the text.
        Hint::Number
            if matches!(
                text.as_bytes().last(),
                Some(b'i' | b'm' | b'k' | b'M' | b'G' | b'T' | b'P')
            ) =>
        {
            Yaml11::Str
        }
        Hint::Number => resolve_numeric(text),
    }
}

impl Yaml11 {
    pub fn is_string(&self) -> bool {
        matches!(self, Yaml11::Str)
    }

    /// "null" | "boolean" | "integer" | "float" | "string"
    pub fn type_name(&self) -> &'static str {
        match self {
            Yaml11::Null => "null",
            Yaml11::Bool(_) => "boolean",
            Yaml11::Int(_) => "integer",
            Yaml11::Float(_) => "float",
            Yaml11::Str => "string",
        }
    }

    /// The JSON text sigs.k8s.io/yaml's YAMLToJSON produces for this scalar (e.g. `false`, `64`,
    /// `1000`, `null`, `1000000000` for 1e9); None for Str.
    ///
    /// Also None for `.inf`, `-.inf` and `.nan`: Go's `encoding/json` refuses non-finite floats,
    /// so YAMLToJSON fails for the whole document and kubectl reports an error instead of
    /// sending anything.
    pub fn json_text(&self) -> Option<String> {
        match self {
            Yaml11::Null => Some("null".to_string()),
            Yaml11::Bool(b) => Some(b.to_string()),
            Yaml11::Int(i) => Some(i.to_string()),
            Yaml11::Float(f) => go_json_float(*f),
            Yaml11::Str => None,
        }
    }
}

/// go-yaml's first-byte pre-classification. Only text whose first byte is in one of these
/// classes is ever looked at further; everything else is a string without a second glance,
/// which is why `<<` and `=` never resolve.
#[derive(Clone, Copy)]
enum Hint {
    /// `y Y n N t T f F o O ~`: could only be a table word.
    Word,
    /// `.`: a table word (`.inf`, `.nan`) or a float.
    Dot,
    /// Digit or sign: a table word (`+.inf`, `-.inf`), an integer or a float.
    Number,
}

impl Hint {
    fn of(b: u8) -> Option<Hint> {
        match b {
            b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => {
                Some(Hint::Word)
            }
            b'.' => Some(Hint::Dot),
            b'0'..=b'9' | b'+' | b'-' => Some(Hint::Number),
            _ => None,
        }
    }
}

/// go-yaml v2's exact-spelling table. Case variants are enumerated, not folded: `oFF` and
/// `tRUE` are strings. The single letters `y`/`Y`/`n`/`N` really are booleans in v2.
fn exact_word(text: &str) -> Option<Yaml11> {
    Some(match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Yaml11::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Yaml11::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Yaml11::Null,
        ".nan" | ".NaN" | ".NAN" => Yaml11::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Yaml11::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Yaml11::Float(f64::NEG_INFINITY),
        // `<<` is in go-yaml's table as the merge tag, but its first byte has no hint, so the
        // table is never consulted for it. As a mapping key the parser treats it as a merge;
        // as a value it decodes to the string "<<".
        _ => return None,
    })
}

fn resolve_numeric(text: &str) -> Yaml11 {
    // go-yaml tries timestamps first (`2024-01-01`, `2024-01-01T10:00:00Z`, ...), but v2
    // decodes a timestamp into `interface{}` as its original text, so YAMLToJSON sends the
    // string unchanged. Its quick check needs four digits then `-`, which no integer or float
    // below can match, so skipping the check changes no result.

    // `_` is removed everywhere, not only between digits, so `1__0`, `1_` and `+_1` are numbers.
    let plain: std::borrow::Cow<str> = if text.contains('_') {
        text.chars()
            .filter(|&c| c != '_')
            .collect::<String>()
            .into()
    } else {
        text.into()
    };

    if let Some(i) = go_parse_int(&plain, 0) {
        return Yaml11::Int(i128::from(i));
    }
    // Values in 2^63 ..= 2^64-1 become uint64; a leading `+` is refused here by Go, so
    // `+9223372036854775808` falls through to a float.
    if let Some(u) = go_parse_uint(&plain, 0) {
        return Yaml11::Int(i128::from(u));
    }
    // Integers past uint64 match this pattern too, which is how `18446744073709551616` ends up
    // a float. `08` and `09` fail octal parsing above and land here as floats 8 and 9.
    if is_yaml_style_float(&plain) {
        if let Some(f) = go_parse_decimal_float(&plain) {
            return Yaml11::Float(f);
        }
        // Out of float64 range (`1e400`): Go reports ErrRange and go-yaml moves on, so the
        // text ends up a string.
    }
    // Base-0 parsing above already handled `0b101`; what this fallback adds is that Go's
    // explicit-base parser accepts a sign after the prefix, so `0b-101` is -5.
    //
    // A later, unreleased revision of the fork in the sigs.k8s.io/yaml repository adds a
    // `math/big` fallback here that turns out-of-range `0x...`/`0o...` integers into JSON
    // numbers; no released sigs.k8s.io/yaml (v1.4.0 to v1.6.0) has it, so they stay strings.
    if let Some(rest) = plain.strip_prefix("0b") {
        if let Some(i) = go_parse_int(rest, 2) {
            return Yaml11::Int(i128::from(i));
        }
        if let Some(u) = go_parse_uint(rest, 2) {
            return Yaml11::Int(i128::from(u));
        }
    } else if let Some(rest) = plain.strip_prefix("-0b") {
        if let Some(i) = go_parse_int(&format!("-{rest}"), 2) {
            return Yaml11::Int(i128::from(i));
        }
    }
    Yaml11::Str
}

/// Go's `strconv.ParseUint(s, base, 64)` for base 0 or 2..=36, reduced to success or failure,
/// which is all go-yaml looks at.
fn go_parse_uint(s: &str, base: u32) -> Option<u64> {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return None;
    }
    let base0 = base == 0;
    let (radix, digits) = if base0 {
        // Go needs at least one byte after a two-letter prefix; `0x` alone therefore becomes
        // octal `x`, which fails, while `0` alone is octal zero.
        let second = bytes.get(1).map(u8::to_ascii_lowercase);
        match (bytes[0], second) {
            (b'0', Some(b'b')) if bytes.len() >= 3 => (2, &bytes[2..]),
            (b'0', Some(b'o')) if bytes.len() >= 3 => (8, &bytes[2..]),
            (b'0', Some(b'x')) if bytes.len() >= 3 => (16, &bytes[2..]),
            (b'0', _) => (8, &bytes[1..]),
            _ => (10, bytes),
        }
    } else if (2..=36).contains(&base) {
        (base, bytes)
    } else {
        return None;
    };

    let mut n: u64 = 0;
    let mut underscores = false;
    for &c in digits {
        if c == b'_' && base0 {
            underscores = true;
            continue;
        }
        let d = (c as char).to_digit(36)?;
        if d >= radix {
            return None;
        }
        n = n.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    if underscores && !go_underscore_ok(s) {
        return None;
    }
    Some(n)
}

/// Go's `strconv.ParseInt(s, base, 64)`: an optional sign, then `ParseUint`'s rules.
fn go_parse_int(s: &str, base: u32) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = go_parse_uint(rest, base)?;
    if neg {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's rule for where `_` may appear in a number literal: only between digits, or between a
/// base prefix and a digit.
fn go_underscore_ok(s: &str) -> bool {
    #[derive(PartialEq)]
    enum Saw {
        Start,
        Digit,
        Underscore,
        Other,
    }
    let mut b = s.as_bytes();
    if let Some(b'+' | b'-') = b.first() {
        b = &b[1..];
    }
    let mut saw = Saw::Start;
    let mut hex = false;
    let mut i = 0;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = Saw::Digit;
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    for &c in &b[i..] {
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = Saw::Digit;
        } else if c == b'_' {
            if saw != Saw::Digit {
                return false;
            }
            saw = Saw::Underscore;
        } else if saw == Saw::Underscore {
            return false;
        } else {
            saw = Saw::Other;
        }
    }
    saw != Saw::Underscore
}

/// Go's `strconv.ParseFloat(s, 64)` for decimal input, reduced to success or failure.
///
/// Hexadecimal floats and the `inf`/`nan` words Go also accepts cannot reach this function:
/// on the `.` path the text starts with `.`, and on the numeric path the strict pattern has
/// already been checked.
fn go_parse_decimal_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    if let Some(b'+' | b'-') = b.first() {
        i = 1;
    }
    let mut saw_dot = false;
    let mut saw_digits = false;
    let mut underscores = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'_' => underscores = true,
            b'.' if !saw_dot => saw_dot = true,
            b'0'..=b'9' => saw_digits = true,
            _ => break,
        }
        i += 1;
    }
    if !saw_digits {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        // The first exponent byte must be a digit; `_` is accepted only after one.
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        while let Some(b'0'..=b'9' | b'_') = b.get(i) {
            underscores |= b[i] == b'_';
            i += 1;
        }
    }
    if i != b.len() || (underscores && !go_underscore_ok(s)) {
        return None;
    }
    let cleaned: String = s.chars().filter(|&c| c != '_').collect();
    // Both Go and Rust round correctly, so they agree on every finite value. Go reports
    // overflow as ErrRange (which go-yaml treats as "not a float"); Rust returns infinity.
    // Underflow to zero is not an error in either.
    cleaned.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// The strict pattern go-yaml requires before it lets Go parse a float on the numeric path:
/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`. It keeps out Go-only spellings
/// such as `0x1p3`, `inf` and `Infinity`.
fn is_yaml_style_float(s: &str) -> bool {
    fn digits(b: &[u8], i: &mut usize) -> usize {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    }
    let b = s.as_bytes();
    let mut i = 0;
    if let Some(b'+' | b'-') = b.first() {
        i = 1;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(b, &mut i) == 0 {
            return false;
        }
    } else {
        if digits(b, &mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(b, &mut i);
        }
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        if digits(b, &mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Whether [`Yaml11::json_text`] of the float that `text` resolves to is `text` itself, so that
/// the text can stand for it without formatting the float (which costs thousands of
/// instructions). It is when `text` is a plain decimal without a `+`, leading zeros, trailing
/// fractional zeros or an exponent, with at most 15 significant digits (a float64 keeps those
/// exactly, so they are its shortest round-trip digits), and at least 1e-6, below which Go writes
/// an exponent.
pub fn json_float_is_text(text: &str) -> bool {
    let body = text.strip_prefix('-').unwrap_or(text);
    let Some((int, frac)) = body.split_once('.') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) || frac.ends_with('0') {
        return false;
    }
    if int == "0" {
        let significant = frac.trim_start_matches('0').len();
        frac.len() - significant <= 5 && significant <= 15
    } else {
        !int.starts_with('0') && int.len() + frac.len() <= 15
    }
}

/// How Go's `encoding/json` writes a float64: the shortest digits that round-trip, in plain
/// notation for magnitudes in [1e-6, 1e21) and in exponent notation outside, with the
/// exponent written without leading zeros (`1e-7`, `1e+21`). Non-finite values are an error
/// in Go, hence None.
fn go_json_float(f: f64) -> Option<String> {
    if !f.is_finite() {
        return None;
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let abs = f.abs();
    let (digits, exp) = go_shortest_digits(abs)?;
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        return Some(format!(
            "{sign}{first}{frac}e{exp_sign}{}",
            exp.unsigned_abs()
        ));
    }
    // Position of the decimal point relative to the start of `digits`.
    let point = exp + 1;
    let nd = i32::try_from(digits.len()).ok()?;
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point >= nd {
        format!("{digits}{}", "0".repeat(point.abs_diff(nd) as usize))
    } else {
        let (int_part, frac_part) = digits.split_at(point.unsigned_abs() as usize);
        format!("{int_part}.{frac_part}")
    };
    Some(format!("{sign}{body}"))
}

/// The shortest round-trip digits of a non-negative finite float as Go's `strconv` picks them,
/// with the decimal exponent of the first digit.
///
/// Rust's `{:e}` finds the same shortest length and the same digits except in one case: when
/// the float lies exactly halfway between two shortest candidates that both round-trip, Rust
/// takes the upper one and Go the one whose last digit is even (`1058359863889635.25` is
/// `1058359863889635.3` in Rust and `1058359863889635.2` in Go).
fn go_shortest_digits(abs: f64) -> Option<(String, i32)> {
    let (digits, exp) = split_sci(&format!("{abs:e}"))?;
    let last = *digits.as_bytes().last()?;
    // Rust's pick is the upper candidate of a tie, so Go disagrees only when it is odd.
    if matches!(last, b'0' | b'2' | b'4' | b'6' | b'8') {
        return Some((digits, exp));
    }
    let mut lower = digits.clone();
    lower.pop();
    lower.push(char::from(last - 1));
    let scale = exp - (i32::try_from(lower.len()).ok()? - 1);
    if format!("{lower}e{scale}").parse::<f64>() != Ok(abs) {
        return Some((digits, exp));
    }
    // Both candidates round-trip; it is a tie only if the float is exactly their midpoint.
    // A float64 has at most 767 significant decimal digits, so 800 places are exact.
    let (exact, exact_exp) = split_sci(&format!("{abs:.800e}"))?;
    let midpoint = format!("{lower}5");
    if exact_exp == exp && exact.trim_end_matches('0') == midpoint {
        return Some((lower, exp));
    }
    Some((digits, exp))
}

/// Splits Rust's `d.ddde[-]x` into the digit string and the exponent.
fn split_sci(sci: &str) -> Option<(String, i32)> {
    let (mantissa, exp) = sci.split_once('e')?;
    Some((
        mantissa.chars().filter(|&c| c != '.').collect(),
        exp.parse().ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (input, expected type name, expected JSON text or None).
    ///
    /// Each row is what kubectl/Helm send for `key: <input>` once YAMLToJSON has run. The
    /// expectations were checked against sigs.k8s.io/yaml v1.6.0 (go.yaml.in/yaml/v2 v2.4.2)
    /// and the v1.4.0 vendored fork, which agree on every row.
    const CASES: &[(&str, &str, Option<&str>)] = &[
        // YAML 1.1 booleans: the classic env `value: off` trap; kubectl sends `false`.
        ("off", "boolean", Some("false")),
        ("Off", "boolean", Some("false")),
        ("OFF", "boolean", Some("false")),
        ("on", "boolean", Some("true")),
        ("On", "boolean", Some("true")),
        ("ON", "boolean", Some("true")),
        ("yes", "boolean", Some("true")),
        ("Yes", "boolean", Some("true")),
        ("YES", "boolean", Some("true")),
        ("no", "boolean", Some("false")),
        ("No", "boolean", Some("false")),
        ("NO", "boolean", Some("false")),
        // Single letters are booleans in go-yaml v2 (they are not in v3).
        ("y", "boolean", Some("true")),
        ("Y", "boolean", Some("true")),
        ("n", "boolean", Some("false")),
        ("N", "boolean", Some("false")),
        ("true", "boolean", Some("true")),
        ("True", "boolean", Some("true")),
        ("TRUE", "boolean", Some("true")),
        ("false", "boolean", Some("false")),
        ("False", "boolean", Some("false")),
        ("FALSE", "boolean", Some("false")),
        // Mixed case is not folded: kubectl sends the string.
        ("oFF", "string", None),
        ("tRUE", "string", None),
        ("yES", "string", None),
        ("nO", "string", None),
        ("o", "string", None),
        ("t", "string", None),
        ("f", "string", None),
        // Nulls: kubectl sends `null`, which for most fields means "unset".
        ("~", "null", Some("null")),
        ("null", "null", Some("null")),
        ("Null", "null", Some("null")),
        ("NULL", "null", Some("null")),
        ("", "null", Some("null")),
        ("nULL", "string", None),
        // Decimal integers.
        ("4", "integer", Some("4")),
        ("-4", "integer", Some("-4")),
        ("+4", "integer", Some("4")),
        ("0", "integer", Some("0")),
        ("-0", "integer", Some("0")),
        ("+0", "integer", Some("0")),
        // A leading zero means octal: `memory: 0100` is 64 bytes.
        ("0100", "integer", Some("64")),
        ("012", "integer", Some("10")),
        ("00", "integer", Some("0")),
        ("-012", "integer", Some("-10")),
        // Not valid octal, so not an integer; the float pattern then accepts it: float 8.
        ("08", "float", Some("8")),
        ("09", "float", Some("9")),
        ("0189", "float", Some("189")),
        // Go's base prefixes, either case.
        ("0x1F", "integer", Some("31")),
        ("0X1f", "integer", Some("31")),
        ("-0x1F", "integer", Some("-31")),
        ("0b101", "integer", Some("5")),
        ("0B101", "integer", Some("5")),
        ("-0b101", "integer", Some("-5")),
        ("0o17", "integer", Some("15")),
        ("0O17", "integer", Some("15")),
        // The `0b` fallback uses Go's explicit-base parser, which takes a sign after the prefix.
        ("0b-101", "integer", Some("-5")),
        ("0b+101", "integer", Some("5")),
        ("0x", "string", None),
        ("0b", "string", None),
        ("0b2", "string", None),
        ("0xG", "string", None),
        // Every `_` is dropped before integer parsing.
        ("1_000", "integer", Some("1000")),
        ("1__0", "integer", Some("10")),
        ("1_", "integer", Some("1")),
        ("+_1", "integer", Some("1")),
        ("0x_1F", "integer", Some("31")),
        ("1_000.5", "float", Some("1000.5")),
        ("_1", "string", None),
        // Floats; Go's JSON encoder writes integral floats without a fraction.
        ("1e3", "float", Some("1000")),
        ("1E3", "float", Some("1000")),
        ("1.0e+3", "float", Some("1000")),
        ("1e+3", "float", Some("1000")),
        ("12e-1", "float", Some("1.2")),
        ("1.5", "float", Some("1.5")),
        ("0.5", "float", Some("0.5")),
        ("-1.5", "float", Some("-1.5")),
        (".5", "float", Some("0.5")),
        ("-.5", "float", Some("-0.5")),
        ("+.5", "float", Some("0.5")),
        ("1.", "float", Some("1")),
        ("1.0", "float", Some("1")),
        ("-0.0", "float", Some("-0")),
        ("1e9", "float", Some("1000000000")),
        ("1.5e9", "float", Some("1500000000")),
        ("1e-6", "float", Some("0.000001")),
        ("1e-7", "float", Some("1e-7")),
        ("1e21", "float", Some("1e+21")),
        ("1e20", "float", Some("100000000000000000000")),
        // Exactly halfway between two shortest spellings: Go keeps the even last digit.
        ("1058359863889635.25", "float", Some("1058359863889635.2")),
        ("633240401026923.25", "float", Some("633240401026923.2")),
        (
            "1.7976931348623157e308",
            "float",
            Some("1.7976931348623157e+308"),
        ),
        // Underflow is not an error in Go: kubectl sends 0.
        ("1e-400", "float", Some("0")),
        // Overflow is an error in Go's ParseFloat, so go-yaml gives up: a string.
        ("1e400", "string", None),
        (".1e999", "string", None),
        // On the `.` path Go's own float syntax applies, which allows `_` between digits.
        (".5_0", "float", Some("0.5")),
        (".5e1_0", "float", Some("5000000000")),
        ("._5", "string", None),
        (".5_", "string", None),
        (".", "string", None),
        (".e3", "string", None),
        ("1e", "string", None),
        ("1.2.3", "string", None),
        // YAML's special floats; YAMLToJSON fails on them, so kubectl errors out.
        (".inf", "float", None),
        (".Inf", "float", None),
        (".INF", "float", None),
        ("+.inf", "float", None),
        ("-.inf", "float", None),
        ("-.Inf", "float", None),
        ("-.INF", "float", None),
        (".nan", "float", None),
        (".NaN", "float", None),
        (".NAN", "float", None),
        // Spellings outside the table are strings, including Go's own `inf`/`NaN` words.
        (".inF", "string", None),
        ("+.nan", "string", None),
        ("-.nan", "string", None),
        ("inf", "string", None),
        ("+inf", "string", None),
        ("-Infinity", "string", None),
        ("NaN", "string", None),
        ("0x1p3", "string", None),
        // int64 and uint64 limits.
        (
            "9223372036854775807",
            "integer",
            Some("9223372036854775807"),
        ),
        (
            "-9223372036854775808",
            "integer",
            Some("-9223372036854775808"),
        ),
        (
            "9223372036854775808",
            "integer",
            Some("9223372036854775808"),
        ),
        (
            "18446744073709551615",
            "integer",
            Some("18446744073709551615"),
        ),
        (
            "0xFFFFFFFFFFFFFFFF",
            "integer",
            Some("18446744073709551615"),
        ),
        // Past the limits the decimal-float pattern takes over.
        (
            "18446744073709551616",
            "float",
            Some("18446744073709552000"),
        ),
        (
            "-9223372036854775809",
            "float",
            Some("-9223372036854776000"),
        ),
        ("+9223372036854775808", "float", Some("9223372036854776000")),
        ("2147483648000000000000", "float", Some("2.147483648e+21")),
        // Out-of-range hex has no float fallback: a string.
        ("0x10000000000000000", "string", None),
        // Quantities and other text stay strings.
        ("512Mi", "string", None),
        ("100m", "string", None),
        ("1Gi", "string", None),
        ("1G", "string", None),
        ("0.5Gi", "string", None),
        ("abc", "string", None),
        ("1 000", "string", None),
        ("-", "string", None),
        ("+", "string", None),
        ("- 1", "string", None),
        // No sexagesimal numbers in go-yaml v2: kubectl sends "1:30".
        ("1:30", "string", None),
        ("190:20:30", "string", None),
        ("1:30.5", "string", None),
        // Merge key and YAML 1.1 value key: as values they are plain strings.
        ("<<", "string", None),
        ("=", "string", None),
        // Timestamps decode into interface{} as their original text: kubectl sends the string.
        ("2024-01-01", "string", None),
        ("2024-1-2", "string", None),
        ("2001-12-14t21:59:43.10-05:00", "string", None),
        ("2001-12-14 21:59:43.10", "string", None),
        ("2024-13-45", "string", None),
        // Non-ASCII and odd first bytes.
        ("é", "string", None),
        ("１", "string", None),
        ("\u{0}", "string", None),
    ];

    #[test]
    fn floats_printed_as_written_are_the_json_text() {
        // Decimal texts of every shape near the rules' edges: leading zeros, 15 and 16
        // significant digits, 1e-6, trailing zeros, signs. Each one the shortcut accepts must be
        // the JSON text of its float.
        let mut texts = vec![
            "0.5",
            "-0.5",
            "+0.5",
            "0.50",
            "00.5",
            "1.25",
            "0.000001",
            "0.0000001",
            "0.0000015",
            "123456789012345.1",
            "12345678901234.5",
            "0.123456789012345",
            "0.1234567890123456",
            "1.0",
            "10.",
            ".5",
            "1e3",
            "1.5e3",
            "1_000.5",
            "99999999999999.9",
            "0.1",
            "0.3",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let int_len = (x % 17) as usize;
            let frac_len = 1 + ((x >> 8) % 17) as usize;
            let digit = |i: usize| char::from(b'0' + ((x >> (i % 60)) % 10) as u8);
            let int: String = if int_len == 0 {
                "0".into()
            } else {
                (0..int_len).map(digit).collect()
            };
            let frac: String = (0..frac_len).map(|i| digit(i + 20)).collect();
            let sign = if x & (1 << 62) != 0 { "-" } else { "" };
            texts.push(format!("{sign}{int}.{frac}"));
        }
        let mut accepted = 0;
        for t in &texts {
            if json_float_is_text(t) {
                accepted += 1;
                let resolved = resolve_plain(t);
                assert!(matches!(resolved, Yaml11::Float(_)), "{t}");
                assert_eq!(resolved.json_text().as_deref(), Some(t.as_str()), "{t}");
            }
        }
        assert!(accepted > 5_000, "{accepted}");
        for t in [
            "0.50",
            "00.5",
            "+0.5",
            "0.0000001",
            "0.1234567890123456",
            "1e3",
            "10.",
        ] {
            assert!(!json_float_is_text(t), "{t}");
        }
    }

    #[test]
    fn table() {
        let mut failures = Vec::new();
        for &(input, ty, json) in CASES {
            let got = resolve_plain(input);
            let got_json = got.json_text();
            if got.type_name() != ty || got_json.as_deref() != json {
                failures.push(format!(
                    "{input:?}: got {} {got_json:?}, want {ty} {json:?}",
                    got.type_name()
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn quantity_suffixes_resolve_as_the_full_parsers_do() {
        let stems = [
            "0", "1", "64", "+1", "-1", "0x1", "0x", "0b1", "0o7", "0xff", "1e3", "1.5", "1.",
            ".5", "1_0", "0b-1", "-0b1", "1e", "08", "1__",
        ];
        for stem in stems {
            for suffix in [
                "i", "m", "k", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
            ] {
                let text = format!("{stem}{suffix}");
                let (fast, full) = (resolve_plain(&text), resolve_numeric(&text));
                assert_eq!(fast.type_name(), full.type_name(), "{text}");
                assert_eq!(fast.json_text(), full.json_text(), "{text}");
            }
        }
    }

    #[test]
    fn variants() {
        assert_eq!(resolve_plain("off"), Yaml11::Bool(false));
        assert_eq!(resolve_plain("0100"), Yaml11::Int(64));
        assert_eq!(
            resolve_plain("18446744073709551615"),
            Yaml11::Int(i128::from(u64::MAX))
        );
        assert_eq!(resolve_plain("08"), Yaml11::Float(8.0));
        assert_eq!(resolve_plain("~"), Yaml11::Null);
        assert_eq!(resolve_plain("512Mi"), Yaml11::Str);
        assert_eq!(resolve_plain("-.inf"), Yaml11::Float(f64::NEG_INFINITY));
        assert!(matches!(resolve_plain(".nan"), Yaml11::Float(f) if f.is_nan()));
        assert!(resolve_plain("abc").is_string());
        assert!(!resolve_plain("4").is_string());
    }

    #[test]
    fn type_names() {
        assert_eq!(Yaml11::Null.type_name(), "null");
        assert_eq!(Yaml11::Bool(true).type_name(), "boolean");
        assert_eq!(Yaml11::Int(1).type_name(), "integer");
        assert_eq!(Yaml11::Float(1.0).type_name(), "float");
        assert_eq!(Yaml11::Str.type_name(), "string");
    }

    #[test]
    fn json_float_notation_boundaries() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1e-6, "0.000001"),
            (9.99e-7, "9.99e-7"),
            (1.5e-10, "1.5e-10"),
            (123456.789, "123456.789"),
            (9.999999999999999e20, "999999999999999900000"),
            (1e21, "1e+21"),
            (-2.5e300, "-2.5e+300"),
            (5e-324, "5e-324"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1058359863889635.0 + 0.25, "1058359863889635.2"),
            (1058359863889635.0 + 0.75, "1058359863889635.8"),
            (-984021696520911.0 - 0.25, "-984021696520911.2"),
        ];
        for &(f, want) in cases {
            assert_eq!(go_json_float(f).as_deref(), Some(want), "{f:e}");
        }
    }

    #[test]
    fn never_panics() {
        let alphabet = [
            "", "0", "1", "9", "_", ".", "+", "-", "e", "E", "x", "X", "b", "o", "O", "f", "i",
            "n", "a", ":", " ", "~", "<", "é", "\u{0}", "\u{ffff}",
        ];
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    for d in ["", "0", "_", ".", "e", "-"] {
                        let s = format!("{a}{b}{c}{d}");
                        let v = resolve_plain(&s);
                        let _ = v.json_text();
                    }
                }
            }
        }
        let long_digits = "9".repeat(10_000);
        assert_eq!(
            resolve_plain(&long_digits).type_name(),
            "string",
            "overflows to float infinity, which Go reports as a range error"
        );
        let long_frac = format!("0.{}", "1".repeat(10_000));
        assert_eq!(resolve_plain(&long_frac).type_name(), "float");
        assert_eq!(resolve_plain(&"_".repeat(100)).type_name(), "string");
    }
}
