//! Kubernetes resource quantities (`500m`, `1.5Gi`, `1e3`), parsed the way apimachinery's
//! `resource.ParseQuantity` parses them, with exact integer arithmetic.
//!
//! Rules compare requests with limits, derive `GOMEMLIMIT` from a memory limit, and predict what a
//! downward-API env var receives. All of that needs the value the API server stores, not an
//! approximation of it: `1Gi` must equal `1073741824`, `100m` of memory is exactly a tenth of a
//! byte, and `1G` is less than `1Gi`. Floats cannot promise that, so a value is an `i128` count of
//! nano-units, the finest precision apimachinery keeps.
//!
//! Where this module knowingly differs from apimachinery v0.37.2, the item's doc says so:
//! [`QuantityError::NoDigits`] (digitless text such as `Gi` is rejected rather than read as 0),
//! [`Quantity::canonical`] (no exponent is dropped from huge DecimalSI values), and
//! [`Quantity::is_saturated`] (decimal values beyond about 1.7e29 units do not fit an i128).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

const NANOS_PER_UNIT: i128 = 1_000_000_000;
const NANOS_PER_MILLI: i128 = 1_000_000;
/// ParseQuantity caps a BinarySI magnitude at MaxInt64 units (that is how `8Ei` becomes
/// 9223372036854775807); decimal formats are not capped there.
const BINARY_CAP_NANOS: u128 = (i64::MAX as u128) * (NANOS_PER_UNIT as u128);
/// The largest magnitude this type can hold. Only absurd decimal literals (above about 1.7e29
/// units) reach it, and those are the one case where the stored value differs from apimachinery's.
const MAX_MAGNITUDE: u128 = i128::MAX as u128;

/// The suffix family of a quantity. apimachinery remembers it so that serialising a value keeps
/// the style the user wrote (`Gi` stays binary, `e3` stays an exponent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `Ki`, `Mi`, `Gi`, `Ti`, `Pi`, `Ei`.
    BinarySI,
    /// `n`, `u`, `m`, no suffix, `k`, `M`, `G`, `T`, `P`, `E`.
    DecimalSI,
    /// `e<exponent>` or `E<exponent>`.
    DecimalExponent,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::BinarySI => "BinarySI",
            Format::DecimalSI => "DecimalSI",
            Format::DecimalExponent => "DecimalExponent",
        })
    }
}

/// A parsed quantity. Equality, ordering and hashing look at the value only, never at the format
/// or the spelling, because that is how Kubernetes compares quantities (`Quantity.Cmp`).
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    nanos: i128,
    format: Format,
    exact: bool,
    saturated: bool,
}

/// Why a string is not a quantity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuantityError {
    /// The empty string.
    Empty,
    /// A character that cannot appear at that place: white space, `_`, `,`, a second `.`,
    /// non-ASCII digits. `offset` is a byte offset into the text given to the parser.
    UnexpectedChar { ch: char, offset: usize },
    /// Letters after the number that are neither an SI suffix nor an exponent.
    UnknownSuffix { suffix: String },
    /// `e`/`E` not followed by an optionally signed run of digits (`1e`, `1e+`).
    BadExponent { suffix: String },
    /// An exponent that does not fit a signed 64-bit integer, which apimachinery rejects.
    ExponentOutOfRange { suffix: String },
    /// The number has no digits (`.`, `+`, `-`, `Gi`, `e3`). This is the documented grammar, but
    /// apimachinery's scanner is looser and silently reads such text as zero; see
    /// [`QuantityError::apimachinery_reads_as_zero`].
    NoDigits { suffix: String },
}

impl QuantityError {
    /// True when the API server would accept the text anyway (as the value 0), so a rule can say
    /// "this means 0" rather than "the API server rejects this".
    pub fn apimachinery_reads_as_zero(&self) -> bool {
        matches!(self, QuantityError::NoDigits { .. })
    }
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuantityError::Empty => f.write_str("empty quantity"),
            QuantityError::UnexpectedChar { ch, offset } => {
                write!(f, "unexpected character {ch:?} at byte {offset}")?;
                if ch.is_whitespace() {
                    f.write_str(" (quantities contain no white space)")
                } else if *ch == '_' || *ch == ',' {
                    f.write_str(" (quantities have no digit separators)")
                } else {
                    Ok(())
                }
            }
            QuantityError::UnknownSuffix { suffix } => {
                write!(f, "unknown suffix {suffix:?}")?;
                match suffix_hint(suffix) {
                    Some(hint) => write!(f, " ({hint})"),
                    None => Ok(()),
                }
            }
            QuantityError::BadExponent { suffix } => write!(
                f,
                "invalid exponent {suffix:?} (expected e or E, an optional sign, then digits)"
            ),
            QuantityError::ExponentOutOfRange { suffix } => {
                write!(f, "exponent {suffix:?} is out of range")
            }
            QuantityError::NoDigits { suffix } if suffix.is_empty() => {
                f.write_str("no digits in the number (the API server would read it as 0)")
            }
            QuantityError::NoDigits { suffix } => write!(
                f,
                "no digits before the suffix {suffix:?} (the API server would read it as 0)"
            ),
        }
    }
}

impl std::error::Error for QuantityError {}

/// A short fix-it for the suffixes people actually mistype: shell-style `K`, byte units, and the
/// wrong case of a binary suffix.
fn suffix_hint(suffix: &str) -> Option<String> {
    if suffix == "K" {
        return Some("only k is a decimal suffix".to_string());
    }
    let stem = suffix.strip_suffix(['B', 'b']).unwrap_or(suffix);
    let letter = match stem.to_ascii_lowercase().as_str() {
        "k" | "ki" => 'K',
        "m" | "mi" => 'M',
        "g" | "gi" => 'G',
        "t" | "ti" => 'T',
        "p" | "pi" => 'P',
        "e" | "ei" => 'E',
        _ => return None,
    };
    let binary = format!("{letter}i");
    let decimal = if letter == 'K' {
        "k".to_string()
    } else {
        letter.to_string()
    };
    if stem.len() < suffix.len() {
        if stem.len() == 2 {
            return Some(format!("quantities take no byte unit; use {binary:?}"));
        }
        return Some(format!(
            "quantities take no byte unit; use {decimal:?} (powers of 1000) or {binary:?} (powers of 1024)"
        ));
    }
    if stem.len() == 2 {
        return Some(format!("did you mean {binary:?}?"));
    }
    // Single letters: only the ones whose other case is not itself a valid suffix get a hint
    // (`m` and `M` are both valid and mean different things).
    matches!(suffix, "g" | "t" | "p").then(|| format!("did you mean {decimal:?}?"))
}

/// What a valid suffix multiplies the number by.
#[derive(Debug, Clone, Copy)]
enum Multiplier {
    /// 10^exponent.
    Decimal(i64),
    /// 2^bits.
    Binary(u32),
}

fn interpret_suffix(suffix: &str) -> Result<(Multiplier, Format), QuantityError> {
    use Multiplier::{Binary, Decimal};
    let table = match suffix {
        "" => Some((Decimal(0), Format::DecimalSI)),
        "n" => Some((Decimal(-9), Format::DecimalSI)),
        "u" => Some((Decimal(-6), Format::DecimalSI)),
        "m" => Some((Decimal(-3), Format::DecimalSI)),
        "k" => Some((Decimal(3), Format::DecimalSI)),
        "M" => Some((Decimal(6), Format::DecimalSI)),
        "G" => Some((Decimal(9), Format::DecimalSI)),
        "T" => Some((Decimal(12), Format::DecimalSI)),
        "P" => Some((Decimal(15), Format::DecimalSI)),
        "E" => Some((Decimal(18), Format::DecimalSI)),
        "Ki" => Some((Binary(10), Format::BinarySI)),
        "Mi" => Some((Binary(20), Format::BinarySI)),
        "Gi" => Some((Binary(30), Format::BinarySI)),
        "Ti" => Some((Binary(40), Format::BinarySI)),
        "Pi" => Some((Binary(50), Format::BinarySI)),
        "Ei" => Some((Binary(60), Format::BinarySI)),
        _ => None,
    };
    if let Some(found) = table {
        return Ok(found);
    }
    if let Some(exponent) = suffix.strip_prefix(['e', 'E']) {
        return match parse_go_int64(exponent) {
            // apimachinery parses the exponent as int64 and then converts it with int32(...),
            // which wraps: `1e4294967296` really is 1. Mirroring the wrap keeps values identical.
            Ok(e) => Ok((Decimal(i64::from(e as i32)), Format::DecimalExponent)),
            Err(IntError::Overflow) => Err(QuantityError::ExponentOutOfRange {
                suffix: suffix.to_string(),
            }),
            Err(IntError::Syntax) => Err(QuantityError::BadExponent {
                suffix: suffix.to_string(),
            }),
        };
    }
    Err(QuantityError::UnknownSuffix {
        suffix: suffix.to_string(),
    })
}

enum IntError {
    Syntax,
    Overflow,
}

/// Go's `strconv.ParseInt(s, 10, 64)`: optional sign, at least one ASCII digit, leading zeros
/// allowed, nothing else.
fn parse_go_int64(s: &str) -> Result<i64, IntError> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(IntError::Syntax);
    }
    let mut magnitude: u64 = 0;
    for b in digits.bytes() {
        magnitude = magnitude
            .checked_mul(10)
            .and_then(|m| m.checked_add(u64::from(b - b'0')))
            .ok_or(IntError::Overflow)?;
    }
    if negative {
        if magnitude > i64::MAX as u64 + 1 {
            return Err(IntError::Overflow);
        }
        Ok((magnitude as i64).wrapping_neg())
    } else {
        i64::try_from(magnitude).map_err(|_| IntError::Overflow)
    }
}

/// The pieces of `[sign] digits [. digits] suffix`. Only the ASCII prefix is consumed, so every
/// slice boundary is a char boundary.
struct Parts<'a> {
    negative: bool,
    int_digits: &'a str,
    frac_digits: &'a str,
    suffix: &'a str,
    suffix_offset: usize,
}

fn split(text: &str) -> Parts<'_> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let negative = match bytes.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let int_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = &text[int_start..i];
    let mut frac_digits = "";
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        let frac_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = &text[frac_start..i];
    }
    Parts {
        negative,
        int_digits,
        frac_digits,
        suffix: &text[i..],
        suffix_offset: i,
    }
}

/// Text that can only be a (possibly misspelt) suffix gets a suffix error; anything else is
/// reported at its first character that cannot belong to a quantity, which points at stray white
/// space or a second dot more usefully than "unknown suffix" would.
fn check_suffix_shape(suffix: &str, offset: usize) -> Result<(), QuantityError> {
    let suffix_char = |c: char| c.is_ascii_alphanumeric() || c == '+' || c == '-';
    let starts_with_letter = suffix.starts_with(|c: char| c.is_ascii_alphabetic());
    if suffix.is_empty() || (starts_with_letter && suffix.chars().all(suffix_char)) {
        return Ok(());
    }
    let (at, ch) = if starts_with_letter {
        suffix
            .char_indices()
            .find(|&(_, c)| !suffix_char(c))
            .unwrap_or((0, '\0'))
    } else {
        suffix.char_indices().next().unwrap_or((0, '\0'))
    };
    Err(QuantityError::UnexpectedChar {
        ch,
        offset: offset + at,
    })
}

/// The magnitude of a parsed number in nano-units.
struct Magnitude {
    nanos: u128,
    /// No non-zero digit was lost to rounding up to a whole nano-unit.
    exact: bool,
    /// The value did not fit in a u128 before any cap.
    overflow: bool,
}

/// `digits × 10^-frac_len × multiplier`, in nano-units, rounded up to a whole nano-unit.
///
/// apimachinery rounds a parsed value "up" with `inf.RoundUp`, which rounds the magnitude away
/// from zero: the sign is applied afterwards, so `-0.9n` is `-1n`. Working on the magnitude here
/// gives the same result for both signs.
fn magnitude(int_digits: &str, frac_digits: &str, multiplier: Multiplier) -> Magnitude {
    let all: Vec<u8> = int_digits
        .bytes()
        .chain(frac_digits.bytes())
        .map(|b| b - b'0')
        .collect();
    let Some(first) = all.iter().position(|&d| d != 0) else {
        return Magnitude {
            nanos: 0,
            exact: true,
            overflow: false,
        };
    };
    let significant = &all[first..];
    let (bits, exponent) = match multiplier {
        Multiplier::Decimal(e) => (0u32, i128::from(e)),
        Multiplier::Binary(bits) => (bits, 0),
    };
    let power_of_two = 1u128 << bits;
    // The power of ten that turns the significant digits, read as an integer, into nano-units.
    // i128 holds any exponent and any realistic input length without overflow.
    let shift = exponent - frac_digits.len() as i128 + 9;
    let len = significant.len() as i128;
    let overflow = Magnitude {
        nanos: u128::MAX,
        exact: true,
        overflow: true,
    };

    if shift >= 0 {
        // u128 holds at most 39 decimal digits, so longer results cannot fit; checking that first
        // keeps `1e999999999` from computing anything large.
        if len + shift > 39 {
            return overflow;
        }
        let value = digits_to_u128(significant)
            .and_then(|v| v.checked_mul(10u128.checked_pow(shift as u32)?))
            .and_then(|v| v.checked_mul(power_of_two));
        return match value {
            Some(nanos) => Magnitude {
                nanos,
                exact: true,
                overflow: false,
            },
            None => overflow,
        };
    }

    // The last `drop` digits (some of them implicit leading zeros) are the sub-nano fraction.
    let drop = -shift;
    let (whole, fraction, implicit_zeros) = if len > drop {
        let cut = (len - drop) as usize;
        (&significant[..cut], &significant[cut..], 0)
    } else {
        (&significant[..0], significant, drop - len)
    };
    let Some(whole) = digits_to_u128(whole).and_then(|w| w.checked_mul(power_of_two)) else {
        return overflow;
    };
    // fraction × 2^bits, computed digit by digit from the least significant end: the carry out of
    // the top is the whole part and any non-zero digit left behind is a remainder. One pass, no
    // big integers, however long the input.
    let mut carry: u128 = 0;
    let mut remainder = false;
    for &d in fraction.iter().rev() {
        let v = u128::from(d) * power_of_two + carry;
        remainder |= v % 10 != 0;
        carry = v / 10;
    }
    // Implicit zeros between the point and the digits only shift the carry further right.
    let mut zeros = implicit_zeros;
    while carry != 0 && zeros > 0 {
        remainder |= carry % 10 != 0;
        carry /= 10;
        zeros -= 1;
    }
    match whole
        .checked_add(carry)
        .and_then(|v| v.checked_add(u128::from(remainder)))
    {
        Some(nanos) => Magnitude {
            nanos,
            exact: !remainder,
            overflow: false,
        },
        None => overflow,
    }
}

fn digits_to_u128(digits: &[u8]) -> Option<u128> {
    digits.iter().try_fold(0u128, |acc, &d| {
        acc.checked_mul(10)?.checked_add(u128::from(d))
    })
}

/// Division that rounds the magnitude up, as apimachinery's `Value`/`MilliValue` do for the
/// values `ParseQuantity` produces.
fn div_away_from_zero(n: i128, d: i128) -> i128 {
    let q = n / d;
    if n % d == 0 {
        q
    } else {
        q + n.signum()
    }
}

/// Go's `unicode.IsSpace`, restricted to what survives a Go JSON encoder unescaped. The API server
/// trims the raw bytes between the JSON quotes, so a tab or newline (which JSON must escape as
/// `\t`, `\n`) and U+2028/U+2029 (which `encoding/json` escapes) arrive as a backslash and are not
/// trimmed; a plain space or a raw no-break space is.
fn api_trims(c: char) -> bool {
    c.is_whitespace() && c >= ' ' && c != '\u{2028}' && c != '\u{2029}'
}

impl Quantity {
    /// Strict apimachinery `ParseQuantity`: no surrounding white space is allowed.
    ///
    /// Values finer than a nano-unit are rounded away from zero to a whole nano-unit
    /// ([`Quantity::is_exact`] then reports false). A BinarySI magnitude above 2^63−1 units is
    /// capped there, as apimachinery does (`8Ei` is 9223372036854775807); decimal values are not
    /// capped by apimachinery and are kept exactly up to about 1.7e29 units.
    pub fn parse(text: &str) -> Result<Quantity, QuantityError> {
        // Nearly every quantity in a manifest is a short run of digits and a common suffix;
        // those skip the general parser's 128-bit decimal arithmetic.
        if let Some(q) = Quantity::parse_common(text) {
            return Ok(q);
        }
        Quantity::parse_general(text)
    }

    /// `[0-9]{1,12}` and a suffix of `m`, none, `k`, `M`, `G`, `T`, `Ki`, `Mi`, `Gi` or `Ti`:
    /// exactly what [`Quantity::parse_general`] gives for it, or None for anything else.
    fn parse_common(text: &str) -> Option<Quantity> {
        let b = text.as_bytes();
        let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || digits > 12 {
            return None;
        }
        let units = b[..digits]
            .iter()
            .fold(0i128, |n, &d| n * 10 + i128::from(d - b'0'));
        let (nanos, format) = match &b[digits..] {
            b"m" => (units * NANOS_PER_MILLI, Format::DecimalSI),
            b"" => (units * NANOS_PER_UNIT, Format::DecimalSI),
            b"k" => (units * NANOS_PER_UNIT * 1_000, Format::DecimalSI),
            b"M" => (units * NANOS_PER_UNIT * 1_000_000, Format::DecimalSI),
            b"G" => (units * NANOS_PER_UNIT * 1_000_000_000, Format::DecimalSI),
            b"T" => (
                units * NANOS_PER_UNIT * 1_000_000_000_000,
                Format::DecimalSI,
            ),
            b"Ki" => ((units << 10) * NANOS_PER_UNIT, Format::BinarySI),
            b"Mi" => ((units << 20) * NANOS_PER_UNIT, Format::BinarySI),
            b"Gi" => ((units << 30) * NANOS_PER_UNIT, Format::BinarySI),
            b"Ti" => ((units << 40) * NANOS_PER_UNIT, Format::BinarySI),
            _ => return None,
        };
        // Twelve digits times 2^40 can pass apimachinery's MaxInt64 cap: those take the long way.
        if format == Format::BinarySI && nanos as u128 > BINARY_CAP_NANOS {
            return None;
        }
        Some(Quantity {
            nanos,
            format,
            exact: true,
            saturated: false,
        })
    }

    fn parse_general(text: &str) -> Result<Quantity, QuantityError> {
        if text.is_empty() {
            return Err(QuantityError::Empty);
        }
        let parts = split(text);
        check_suffix_shape(parts.suffix, parts.suffix_offset)?;
        let (multiplier, mut format) = interpret_suffix(parts.suffix)?;
        if parts.int_digits.is_empty() && parts.frac_digits.is_empty() {
            return Err(QuantityError::NoDigits {
                suffix: parts.suffix.to_string(),
            });
        }
        let m = magnitude(parts.int_digits, parts.frac_digits, multiplier);
        let (magnitude, saturated) = match multiplier {
            Multiplier::Binary(_) if m.overflow || m.nanos > BINARY_CAP_NANOS => {
                (BINARY_CAP_NANOS, true)
            }
            _ if m.overflow || m.nanos > MAX_MAGNITUDE => (MAX_MAGNITUDE, true),
            _ => (m.nanos, false),
        };
        // apimachinery switches a binary value strictly between 0 and 1 to DecimalSI at parse time
        // so that it never has to print a fraction of a byte with a binary suffix.
        if format == Format::BinarySI && magnitude > 0 && magnitude < NANOS_PER_UNIT as u128 {
            format = Format::DecimalSI;
        }
        // Both magnitudes are at most i128::MAX by construction above.
        let magnitude = magnitude as i128;
        Ok(Quantity {
            nanos: if parts.negative {
                -magnitude
            } else {
                magnitude
            },
            format,
            exact: m.exact,
            saturated,
        })
    }

    /// What the API server accepts for a JSON string sent by a Go client (kubectl, Helm,
    /// client-go): `UnmarshalJSON` applies `strings.TrimSpace` to the raw text between the quotes,
    /// then parses strictly. So `" 1Gi "` is accepted, `"1 Gi"` is not, and neither is `"1Gi\n"`
    /// or `"\t1Gi"`: JSON escapes those characters, and the escape is what gets trimmed (verified
    /// against apimachinery v0.37.2). Error offsets refer to `text` itself.
    pub fn parse_api(text: &str) -> Result<Quantity, QuantityError> {
        let trimmed = text.trim_start_matches(api_trims);
        let lead = text.len() - trimmed.len();
        Quantity::parse(trimmed.trim_end_matches(api_trims)).map_err(|e| match e {
            QuantityError::UnexpectedChar { ch, offset } => QuantityError::UnexpectedChar {
                ch,
                offset: offset + lead,
            },
            other => other,
        })
    }

    /// A quantity of exactly `nanos` nano-units, as if computed rather than parsed.
    pub fn from_nanos(nanos: i128, format: Format) -> Quantity {
        Quantity {
            nanos,
            format,
            exact: true,
            saturated: false,
        }
    }

    /// A whole number of units (`from_units(512, Format::DecimalSI)` is `512`), saturating at the
    /// i128 range of nano-units.
    pub fn from_units(units: i128, format: Format) -> Quantity {
        let (nanos, saturated) = match units.checked_mul(NANOS_PER_UNIT) {
            Some(nanos) => (nanos, false),
            None if units < 0 => (i128::MIN, true),
            None => (i128::MAX, true),
        };
        Quantity {
            nanos,
            format,
            exact: true,
            saturated,
        }
    }

    /// The value × 10^9. Finer precision was rounded away from zero at parse time (up, for the
    /// non-negative values Kubernetes validation allows), exactly as apimachinery rounds it.
    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    /// False when the text had non-zero digits below one nano-unit that had to be rounded.
    pub fn is_exact(&self) -> bool {
        self.exact
    }

    /// True when the text's value did not fit and was clamped: a BinarySI value above 2^63−1
    /// units (which apimachinery clamps the same way), or a decimal value beyond about 1.7e29
    /// units (which apimachinery would keep, and this type cannot).
    pub fn is_saturated(&self) -> bool {
        self.saturated
    }

    /// apimachinery `Value()`: whole units, rounded up. Negative values round away from zero, as
    /// apimachinery does for them.
    pub fn value_ceil(&self) -> i128 {
        div_away_from_zero(self.nanos, NANOS_PER_UNIT)
    }

    /// apimachinery `MilliValue()`: whole milli-units, rounded up (away from zero when negative).
    pub fn milli_value_ceil(&self) -> i128 {
        div_away_from_zero(self.nanos, NANOS_PER_MILLI)
    }

    pub fn format(&self) -> Format {
        self.format
    }

    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// apimachinery's canonical `String()` for a freshly computed value: the largest suffix that
    /// needs no fractional digits, in the quantity's format family. `1.5Gi` → `1536Mi`,
    /// `.5` → `500m`, `1000m` → `1`, `1024Mi` → `1Gi`, `0.001` → `1m`, `1000` → `1k`,
    /// `1e3` → `1e3`, `1024` → `1024`.
    ///
    /// A BinarySI value below 1024 in magnitude, or not a whole number of units, is written in
    /// DecimalSI (`1.1Ki` → `1126400m`), as apimachinery does.
    ///
    /// Two deliberate differences, both for values `ParseQuantity` never produces in the affected
    /// format or which v0.37.2 serialises wrongly:
    /// - DecimalSI beyond the `E` suffix falls back to an exponent (`1000E` → `1e21`). v0.37.2
    ///   drops the exponent and prints `1`; upstream has since fixed it this way.
    /// - BinarySI beyond `Ei` stays at `Ei` (`1024Ei`), where apimachinery would print a bare
    ///   mantissa; parsed binary values are capped below 8Ei and never get there.
    ///
    /// It does not model apimachinery's echo of the original text: a parsed string already in
    /// canonical form is returned unchanged by `String()` even with a `+` sign or leading zeros
    /// (`+1Gi`, `01`), while this always computes the form.
    pub fn canonical(&self) -> String {
        if self.nanos == 0 {
            return "0".to_string();
        }
        let magnitude = self.nanos.unsigned_abs();
        let unit = NANOS_PER_UNIT as u128;
        let binary =
            self.format == Format::BinarySI && magnitude >= 1024 * unit && magnitude % unit == 0;
        let body = if binary {
            binary_string(magnitude / unit)
        } else {
            let family = match self.format {
                Format::DecimalExponent => Format::DecimalExponent,
                Format::BinarySI | Format::DecimalSI => Format::DecimalSI,
            };
            decimal_string(magnitude, family)
        };
        if self.nanos < 0 {
            format!("-{body}")
        } else {
            body
        }
    }
}

/// `units` as mantissa × 1024^k with the largest k the suffixes allow.
fn binary_string(units: u128) -> String {
    const SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let mut mantissa = units;
    let mut k = 0;
    while k + 1 < SUFFIXES.len() && mantissa % 1024 == 0 {
        mantissa /= 1024;
        k += 1;
    }
    format!("{mantissa}{}", SUFFIXES[k])
}

/// A non-zero `nanos` magnitude as mantissa × 10^e, with e the largest multiple of three that
/// leaves an integer mantissa.
fn decimal_string(nanos: u128, format: Format) -> String {
    let mut mantissa = nanos;
    let mut exponent: i32 = -9;
    while mantissa % 10 == 0 {
        mantissa /= 10;
        exponent += 1;
    }
    // Back down to a multiple of three. This multiplies by at most the power of ten just divided
    // out (the exponent started at −9, a multiple of three), so it cannot overflow.
    let back = exponent.rem_euclid(3);
    mantissa *= 10u128.pow(back as u32);
    exponent -= back;
    let suffix = match (format, exponent) {
        (_, 0) => String::new(),
        (Format::DecimalSI, -9) => "n".to_string(),
        (Format::DecimalSI, -6) => "u".to_string(),
        (Format::DecimalSI, -3) => "m".to_string(),
        (Format::DecimalSI, 3) => "k".to_string(),
        (Format::DecimalSI, 6) => "M".to_string(),
        (Format::DecimalSI, 9) => "G".to_string(),
        (Format::DecimalSI, 12) => "T".to_string(),
        (Format::DecimalSI, 15) => "P".to_string(),
        (Format::DecimalSI, 18) => "E".to_string(),
        (_, e) => format!("e{e}"),
    };
    format!("{mantissa}{suffix}")
}

impl FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl Hash for Quantity {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.nanos.hash(state);
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    const GI: i128 = 1 << 30;
    const UNIT: i128 = NANOS_PER_UNIT;

    fn q(text: &str) -> Quantity {
        Quantity::parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
    }

    fn err(text: &str) -> QuantityError {
        match Quantity::parse(text) {
            Ok(v) => panic!("{text:?} should not parse, got {v:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn common_forms_parse_exactly_as_the_general_parser() {
        // Every field (the Debug text), not just the value: the format and the flags matter too.
        let numbers = [
            "0",
            "1",
            "7",
            "00",
            "0100",
            "512",
            "999999999",
            "9223372",
            "8388607",
            "8388608",
            "999999999999",
            "1000000000000",
            "123456789012",
            "4294967296",
        ];
        let suffixes = [
            "", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti", "P", "Pi", "E", "Ei", "n", "u",
            "e3", "K", "mi", "i", " ", ".5",
        ];
        let mut fast = 0;
        for n in numbers {
            for s in suffixes {
                for text in [format!("{n}{s}"), format!("+{n}{s}"), format!("-{n}{s}")] {
                    let general = format!("{:?}", Quantity::parse_general(&text));
                    assert_eq!(format!("{:?}", Quantity::parse(&text)), general, "{text}");
                    fast += usize::from(Quantity::parse_common(&text).is_some());
                }
            }
        }
        // The shortcut did take most of the plain forms.
        assert!(fast > 100, "{fast}");
    }

    #[test]
    fn values_in_nanos() {
        // (input, nanos, format after parsing)
        let cases: &[(&str, i128, Format)] = &[
            ("1Gi", GI * UNIT, Format::BinarySI),
            ("1073741824", GI * UNIT, Format::DecimalSI),
            ("100m", 100_000_000, Format::DecimalSI),
            ("1e3", 1000 * UNIT, Format::DecimalExponent),
            ("1E3", 1000 * UNIT, Format::DecimalExponent),
            ("1e-3", 1_000_000, Format::DecimalExponent),
            ("1.5e3", 1500 * UNIT, Format::DecimalExponent),
            ("12e-1", 1_200_000_000, Format::DecimalExponent),
            ("1e+3", 1000 * UNIT, Format::DecimalExponent),
            ("1E-0", UNIT, Format::DecimalExponent),
            ("1e0003", 1000 * UNIT, Format::DecimalExponent),
            ("+1Gi", GI * UNIT, Format::BinarySI),
            ("01", UNIT, Format::DecimalSI),
            ("1.", UNIT, Format::DecimalSI),
            (".5", 500_000_000, Format::DecimalSI),
            ("1.Gi", GI * UNIT, Format::BinarySI),
            ("1.e3", 1000 * UNIT, Format::DecimalExponent),
            ("1u", 1000, Format::DecimalSI),
            ("1n", 1, Format::DecimalSI),
            ("0.1m", 100_000, Format::DecimalSI),
            ("1.5Gi", 1_610_612_736 * UNIT, Format::BinarySI),
            ("1.9Gi", 2_040_109_465_600_000_000, Format::BinarySI),
            ("1.1Ki", 1_126_400_000_000, Format::BinarySI),
            ("0.5Ki", 512 * UNIT, Format::BinarySI),
            ("0.0005Ki", 512_000_000, Format::DecimalSI),
            ("0.5Mi", 524_288 * UNIT, Format::BinarySI),
            ("100.035Ki", 102_435_840_000_000, Format::BinarySI),
            ("1k", 1000 * UNIT, Format::DecimalSI),
            ("50k", 50_000 * UNIT, Format::DecimalSI),
            ("7M", 7_000_000 * UNIT, Format::DecimalSI),
            ("6G", 6_000_000_000 * UNIT, Format::DecimalSI),
            ("5T", 5_000_000_000_000 * UNIT, Format::DecimalSI),
            ("2P", 2_000_000_000_000_000 * UNIT, Format::DecimalSI),
            ("1E", 1_000_000_000_000_000_000 * UNIT, Format::DecimalSI),
            ("8Ki", 8 * 1024 * UNIT, Format::BinarySI),
            ("7Mi", 7 * (1 << 20) * UNIT, Format::BinarySI),
            ("5Ti", 5 * (1 << 40) * UNIT, Format::BinarySI),
            ("4Pi", 4 * (1 << 50) * UNIT, Format::BinarySI),
            ("3Ei", 3 * (1 << 60) * UNIT, Format::BinarySI),
            ("0.0005k", 500_000_000, Format::DecimalSI),
            ("6.987654321G", 6_987_654_321 * UNIT, Format::DecimalSI),
            ("-1", -UNIT, Format::DecimalSI),
            ("-1.5Gi", -1_610_612_736 * UNIT, Format::BinarySI),
            ("0", 0, Format::DecimalSI),
            ("0Gi", 0, Format::BinarySI),
            ("0.0Gi", 0, Format::BinarySI),
            ("-0", 0, Format::DecimalSI),
            ("000", 0, Format::DecimalSI),
            ("0e5", 0, Format::DecimalExponent),
        ];
        for &(text, nanos, format) in cases {
            let v = q(text);
            assert_eq!(v.nanos(), nanos, "{text}");
            assert_eq!(v.format(), format, "{text}");
            assert!(v.is_exact(), "{text}");
            assert!(!v.is_saturated(), "{text}");
        }
    }

    #[test]
    fn sub_nano_values_round_away_from_zero() {
        // Expected values from apimachinery's own tests and a run of v0.37.2.
        let cases: &[(&str, i128, Format)] = &[
            ("3.001n", 4, Format::DecimalSI),
            ("1.1E-9", 2, Format::DecimalExponent),
            ("0.0000000001", 1, Format::DecimalSI),
            ("0.0000000005", 1, Format::DecimalSI),
            ("0.9n", 1, Format::DecimalSI),
            ("1.5n", 2, Format::DecimalSI),
            ("0.00000012345", 124, Format::DecimalSI),
            ("0.000000000001Ki", 2, Format::DecimalSI),
            ("0.00000000000000000000001Ki", 1, Format::DecimalSI),
            ("1e-100", 1, Format::DecimalExponent),
            ("15e-10", 2, Format::DecimalExponent),
            ("1000000000000000000001e-30", 2, Format::DecimalExponent),
            ("999999999999999999999e-30", 1, Format::DecimalExponent),
            ("-0.9n", -1, Format::DecimalSI),
            ("-1e-100", -1, Format::DecimalExponent),
        ];
        for &(text, nanos, format) in cases {
            let v = q(text);
            assert_eq!((v.nanos(), v.format()), (nanos, format), "{text}");
            assert!(!v.is_exact(), "{text} was rounded");
        }
        // Digits below a nano-unit that are all zero are not a rounding.
        assert!(q("1.0000000000000000000").is_exact());
        assert!(q("1000000000000000000000e-30").is_exact());
        assert_eq!(q("0e-2147483647").nanos(), 0);
    }

    #[test]
    fn binary_fractions_are_exact_whatever_the_length() {
        // 2^60 × 10^-40 is far below a nano-unit; the long fraction must still round up exactly.
        let tiny = format!("0.{}1Ei", "0".repeat(39));
        assert_eq!(q(&tiny).nanos(), 1);
        // 0.1 Ei = 115292150460684697.6 units, a whole number of nano-units.
        let tenth = q("0.1Ei");
        assert_eq!(tenth.nanos(), 115_292_150_460_684_697_600_000_000);
        assert!(tenth.is_exact());
        let long = format!("1.{}1Ki", "0".repeat(60));
        assert_eq!(q(&long).nanos(), 1024 * UNIT + 1);
        assert!(!q(&long).is_exact());
    }

    #[test]
    fn value_and_milli_value_round_up() {
        // (input, Value(), MilliValue()) as apimachinery v0.37.2 returns them.
        let cases: &[(&str, i128, i128)] = &[
            ("100m", 1, 100),
            ("0.1m", 1, 1),
            ("0.5m", 1, 1),
            ("250m", 1, 250),
            ("1", 1, 1000),
            ("1.5", 2, 1500),
            ("1.9Gi", 2_040_109_466, 2_040_109_465_600),
            ("1Gi", GI, GI * 1000),
            ("1e-3", 1, 1),
            ("12e-1", 2, 1200),
            ("1n", 1, 1),
            ("-1", -1, -1000),
            ("-.5", -1, -500),
            ("-1.5", -2, -1500),
            ("-0.5m", -1, -1),
            ("0", 0, 0),
        ];
        for &(text, value, milli) in cases {
            let v = q(text);
            assert_eq!(v.value_ceil(), value, "{text} Value()");
            assert_eq!(v.milli_value_ceil(), milli, "{text} MilliValue()");
        }
    }

    #[test]
    fn binary_values_saturate_at_max_int64_units() {
        let max = i128::from(i64::MAX);
        for text in [
            "8Ei",
            "9Ei",
            "8192Pi",
            "9223372036854775807Ki",
            "99999999999999999999999999999999999999999Ei",
        ] {
            let v = q(text);
            assert_eq!(v.value_ceil(), max, "{text}");
            assert_eq!(v.nanos(), max * UNIT, "{text}");
            assert!(v.is_saturated(), "{text}");
            assert_eq!(v.format(), Format::BinarySI, "{text}");
            assert_eq!(v.canonical(), "9223372036854775807", "{text}");
        }
        assert_eq!(q("-8Ei").value_ceil(), -max);
        assert!(!q("7Ei").is_saturated());
        assert_eq!(q("8191Pi").value_ceil(), 9_222_246_136_947_933_184);
    }

    #[test]
    fn decimal_values_above_max_int64_are_kept() {
        // apimachinery caps only BinarySI; `12E` keeps its value.
        assert_eq!(q("12E").value_ceil(), 12_000_000_000_000_000_000);
        assert_eq!(
            q("9223372036854775808").value_ceil(),
            9_223_372_036_854_775_808
        );
        assert!(!q("12E").is_saturated());
        assert!(q("12E") > q("8Ei"));
        // Beyond what i128 nanos can hold the value clamps and says so.
        let huge = q("1e30");
        assert_eq!(huge.nanos(), i128::MAX);
        assert!(huge.is_saturated());
        assert!(q("1e999999999").is_saturated());
        assert!(q("-1e999999999").is_negative());
    }

    #[test]
    fn exponents_wrap_like_apimachinery() {
        // int64 parse, then a wrapping int32 conversion.
        assert_eq!(q("1e4294967296").nanos(), UNIT);
        assert_eq!(q("1e4294967297").nanos(), 10 * UNIT);
        assert_eq!(q("1e9223372036854775807").nanos(), 100_000_000);
        assert_eq!(q("1e-9223372036854775808").nanos(), UNIT);
        assert_eq!(
            err("1e9223372036854775808"),
            QuantityError::ExponentOutOfRange {
                suffix: "e9223372036854775808".into()
            }
        );
        assert!(matches!(
            err("1e-9223372036854775809"),
            QuantityError::ExponentOutOfRange { .. }
        ));
    }

    #[test]
    fn invalid_inputs() {
        for text in [
            "", "1K", "1gi", "1GB", "1e", " 1Gi", "1Gi ", "1 Gi", "0x10", "1_000", "Gi", ".", "+",
            "-", "+.", "-.", "e3", "m", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i",
            "-3.01i", "-3.01e-", "1ee3", "1Ki3", "1mm", "1kk", "1Mi+", "1+", "1-", "1e+", "1e-",
            "1.2.3", "..5", "1e1.5", "1,000", "１", "1Ｇi", "1\t", "\n1", "1GiB", "1Mb", "--1",
            "+-1", "1e3e3", "1KiB",
        ] {
            assert!(Quantity::parse(text).is_err(), "{text:?} must be invalid");
        }
    }

    #[test]
    fn error_kinds_and_messages() {
        let cases: &[(&str, QuantityError, &str)] = &[
            ("", QuantityError::Empty, "empty quantity"),
            (
                "1K",
                QuantityError::UnknownSuffix { suffix: "K".into() },
                "unknown suffix \"K\" (only k is a decimal suffix)",
            ),
            (
                "1gi",
                QuantityError::UnknownSuffix { suffix: "gi".into() },
                "unknown suffix \"gi\" (did you mean \"Gi\"?)",
            ),
            (
                "1GB",
                QuantityError::UnknownSuffix { suffix: "GB".into() },
                "unknown suffix \"GB\" (quantities take no byte unit; use \"G\" (powers of 1000) or \"Gi\" (powers of 1024))",
            ),
            (
                "1KiB",
                QuantityError::UnknownSuffix { suffix: "KiB".into() },
                "unknown suffix \"KiB\" (quantities take no byte unit; use \"Ki\")",
            ),
            (
                "1kb",
                QuantityError::UnknownSuffix { suffix: "kb".into() },
                "unknown suffix \"kb\" (quantities take no byte unit; use \"k\" (powers of 1000) or \"Ki\" (powers of 1024))",
            ),
            (
                "1g",
                QuantityError::UnknownSuffix { suffix: "g".into() },
                "unknown suffix \"g\" (did you mean \"G\"?)",
            ),
            ("0x10", QuantityError::UnknownSuffix { suffix: "x10".into() }, "unknown suffix \"x10\""),
            (
                "1e",
                QuantityError::BadExponent { suffix: "e".into() },
                "invalid exponent \"e\" (expected e or E, an optional sign, then digits)",
            ),
            ("1e+", QuantityError::BadExponent { suffix: "e+".into() }, "invalid exponent \"e+\" (expected e or E, an optional sign, then digits)"),
            (
                " 1Gi",
                QuantityError::UnexpectedChar { ch: ' ', offset: 0 },
                "unexpected character ' ' at byte 0 (quantities contain no white space)",
            ),
            (
                "1Gi ",
                QuantityError::UnexpectedChar { ch: ' ', offset: 3 },
                "unexpected character ' ' at byte 3 (quantities contain no white space)",
            ),
            (
                "1 Gi",
                QuantityError::UnexpectedChar { ch: ' ', offset: 1 },
                "unexpected character ' ' at byte 1 (quantities contain no white space)",
            ),
            (
                "1_000",
                QuantityError::UnexpectedChar { ch: '_', offset: 1 },
                "unexpected character '_' at byte 1 (quantities have no digit separators)",
            ),
            ("1.2.3", QuantityError::UnexpectedChar { ch: '.', offset: 3 }, "unexpected character '.' at byte 3"),
            ("1Ｇi", QuantityError::UnexpectedChar { ch: 'Ｇ', offset: 1 }, "unexpected character 'Ｇ' at byte 1"),
            (
                "Gi",
                QuantityError::NoDigits { suffix: "Gi".into() },
                "no digits before the suffix \"Gi\" (the API server would read it as 0)",
            ),
            (
                ".",
                QuantityError::NoDigits { suffix: String::new() },
                "no digits in the number (the API server would read it as 0)",
            ),
            ("+", QuantityError::NoDigits { suffix: String::new() }, "no digits in the number (the API server would read it as 0)"),
        ];
        for (text, kind, message) in cases {
            let e = err(text);
            assert_eq!(&e, kind, "{text:?}");
            assert_eq!(e.to_string(), *message, "{text:?}");
        }
        assert!(err("Gi").apimachinery_reads_as_zero());
        assert!(err("-.").apimachinery_reads_as_zero());
        assert!(!err("1K").apimachinery_reads_as_zero());
        // A bad suffix is reported before a missing number, as apimachinery rejects those too.
        assert!(matches!(err("x"), QuantityError::UnknownSuffix { .. }));
        let boxed: Box<dyn std::error::Error> = Box::new(err("1K"));
        assert!(boxed.to_string().starts_with("unknown suffix"));
    }

    #[test]
    fn api_parse_trims_what_survives_json() {
        assert_eq!(Quantity::parse_api(" 1Gi ").unwrap().nanos(), GI * UNIT);
        assert_eq!(Quantity::parse_api("\u{a0}1Gi").unwrap().nanos(), GI * UNIT);
        assert_eq!(
            Quantity::parse_api("\u{3000}1Gi\u{85}").unwrap().nanos(),
            GI * UNIT
        );
        assert_eq!(Quantity::parse_api("500m").unwrap().nanos(), 500_000_000);
        assert_eq!(
            Quantity::parse_api("1 Gi").unwrap_err(),
            QuantityError::UnexpectedChar { ch: ' ', offset: 1 }
        );
        // Offsets stay relative to the caller's text.
        assert_eq!(
            Quantity::parse_api("  1 Gi").unwrap_err(),
            QuantityError::UnexpectedChar { ch: ' ', offset: 3 }
        );
        for text in ["1Gi\n", "\t1Gi", "\u{b}1Gi", "\u{2028}1Gi", "", "   "] {
            assert!(Quantity::parse_api(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn canonical_strings() {
        // Each matches what apimachinery v0.37.2's String() gives for a freshly computed value.
        let cases: &[(&str, &str)] = &[
            ("1.5Gi", "1536Mi"),
            (".5", "500m"),
            ("1000m", "1"),
            ("1024Mi", "1Gi"),
            ("0.001", "1m"),
            ("1000", "1k"),
            ("1e3", "1e3"),
            ("1E3", "1e3"),
            ("1024", "1024"),
            ("1.9Gi", "2040109465600m"),
            ("0.1m", "100u"),
            ("100m", "100m"),
            ("1.5", "1500m"),
            ("12e-1", "1200e-3"),
            ("1.5e3", "1500"),
            ("1e-3", "1e-3"),
            ("5e-1", "500e-3"),
            ("0.5e3", "500"),
            ("1e+3", "1e3"),
            ("1e0", "1"),
            ("1e19", "10e18"),
            ("1e-10", "1e-9"),
            ("+1Gi", "1Gi"),
            ("01", "1"),
            ("1.", "1"),
            ("1.Gi", "1Gi"),
            ("2048Ki", "2Mi"),
            ("1025Mi", "1025Mi"),
            ("1.5Ki", "1536"),
            ("0.5Ki", "512"),
            ("0.9Ki", "921600m"),
            ("1.1Ki", "1126400m"),
            ("0.0005Ki", "512m"),
            ("0.000000001Ki", "1024n"),
            (".000000000001Ki", "2n"),
            ("1023", "1023"),
            ("1023.5", "1023500m"),
            ("1000M", "1G"),
            ("1E", "1E"),
            ("12E", "12E"),
            ("7Ei", "7Ei"),
            ("1Pi", "1Pi"),
            ("1u", "1u"),
            ("1n", "1n"),
            ("3.001n", "4n"),
            ("0", "0"),
            ("0Gi", "0"),
            ("-0", "0"),
            ("0e5", "0"),
            ("-1", "-1"),
            ("-.5", "-500m"),
            ("-1.5Gi", "-1536Mi"),
            ("-8Ei", "-9223372036854775807"),
            ("1000E", "1e21"),
            ("100.035k", "100035"),
            ("10.035M", "10035k"),
        ];
        for &(text, canonical) in cases {
            assert_eq!(q(text).canonical(), canonical, "{text}");
            assert_eq!(q(text).to_string(), canonical, "{text} Display");
            // The canonical form parses back to the same value.
            assert_eq!(q(canonical), q(text), "{text} round trip");
        }
    }

    #[test]
    fn canonical_of_computed_values() {
        assert_eq!(
            Quantity::from_nanos(1_500_000_000, Format::DecimalSI).canonical(),
            "1500m"
        );
        assert_eq!(
            Quantity::from_nanos(1_500_000_000, Format::DecimalExponent).canonical(),
            "1500e-3"
        );
        assert_eq!(
            Quantity::from_nanos(5 * UNIT, Format::BinarySI).canonical(),
            "5"
        );
        assert_eq!(
            Quantity::from_nanos(500_000_000, Format::BinarySI).canonical(),
            "500m"
        );
        assert_eq!(
            Quantity::from_nanos(1_234_567 * 1_000_000, Format::BinarySI).canonical(),
            "1234567m"
        );
        assert_eq!(
            Quantity::from_nanos(1_000_000, Format::DecimalExponent).canonical(),
            "1e-3"
        );
        assert_eq!(
            Quantity::from_units(1024 * 1024, Format::BinarySI).canonical(),
            "1Mi"
        );
        assert_eq!(
            Quantity::from_units(1 << 70, Format::BinarySI).canonical(),
            "1024Ei"
        );
        assert_eq!(
            Quantity::from_units(1_000_000, Format::DecimalExponent).canonical(),
            "1e6"
        );
        assert_eq!(
            Quantity::from_units(1_000_000_000_000_000_000_000, Format::DecimalSI).canonical(),
            "1e21"
        );
        assert_eq!(
            Quantity::from_units(1 << 90, Format::DecimalSI).canonical(),
            (1u128 << 90).to_string()
        );
        assert!(Quantity::from_units(i128::MAX, Format::DecimalSI).is_saturated());
        assert!(Quantity::from_units(i128::MIN, Format::DecimalSI).is_negative());
        assert!(!Quantity::from_units(-5, Format::DecimalSI).is_saturated());
        assert_eq!(
            Quantity::from_nanos(i128::MIN, Format::BinarySI).canonical(),
            format!("-{}n", i128::MIN.unsigned_abs())
        );
    }

    #[test]
    fn divisor_canonical_strings() {
        // The downward API accepts a divisor by its canonical string.
        let cpu = ["1m", "1"];
        let memory = [
            "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
        ];
        let accepted = |text: &str, set: &[&str]| set.contains(&q(text).canonical().as_str());
        assert!(accepted("1000m", &cpu));
        assert!(accepted("0.001", &cpu));
        assert!(accepted("1000", &memory));
        assert!(accepted("1024Ki", &memory));
        assert!(!accepted("1024", &memory));
        assert!(!accepted("1e3", &memory));
        assert!(!accepted("1E3", &memory));
        assert!(!accepted("2", &cpu));
        assert!(!accepted("10m", &cpu));
    }

    #[test]
    fn comparisons_are_by_value() {
        assert_eq!(q("1Gi"), q("1073741824"));
        assert_eq!(q("1"), q("1000m"));
        assert_eq!(q("1e3"), q("1k"));
        assert_eq!(q("0"), q("0Gi"));
        assert!(q("1G") < q("1Gi"));
        assert!(q("100m") < q("1"));
        assert!(q("10000T") > q("100Gi"));
        assert!(q("-1") < q("0"));
        assert_eq!(q("1.5Gi").cmp(&q("1536Mi")), Ordering::Equal);
        assert_eq!(q("2").max(q("1500m")), q("2000m"));
        let set: HashSet<Quantity> = ["1Gi", "1024Mi", "1073741824", "1G"]
            .into_iter()
            .map(q)
            .collect();
        assert_eq!(set.len(), 2);
        assert_eq!("1Gi".parse::<Quantity>(), Ok(q("1024Mi")));
    }

    #[test]
    fn predicates() {
        assert!(q("0").is_zero());
        assert!(q("0.0Gi").is_zero());
        assert!(!q("1n").is_zero());
        assert!(q("-1n").is_negative());
        assert!(!q("-0").is_negative());
        assert!(!q("1").is_negative());
        assert_eq!(Format::BinarySI.to_string(), "BinarySI");
    }

    #[test]
    fn never_panics() {
        let nines = "9".repeat(10_000);
        let zeros = "0".repeat(10_000);
        let mut inputs: Vec<String> = [
            "1e999999999",
            "-1e999999999",
            "1e-999999999",
            "1e2147483647",
            "1e2147483648",
            "1e-2147483648",
            "1e-2147483649",
            "1E99999999999999999999999",
            "9Ei",
            "-9Ei",
            "1e-",
            "e",
            "E",
            "i",
            "+-",
            "-+1",
            ".e1",
            ".Ei",
            "0.e-1",
            "\u{0}",
            "1\u{0}",
            "🙂",
            "1🙂",
            "١٢٣",
            "1e٣",
            "\u{feff}1",
            "1.5.5",
            "--",
            "..",
            "1..",
            "٠.5",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for suffix in [
            "",
            "Ei",
            "E",
            "n",
            "m",
            "Ki",
            "e18",
            "e-18",
            "e2147483647",
            "e-2147483648",
        ] {
            inputs.push(format!("{nines}{suffix}"));
            inputs.push(format!("-{nines}.{nines}{suffix}"));
            inputs.push(format!("0.{zeros}1{suffix}"));
            inputs.push(format!("{zeros}1{suffix}"));
            inputs.push(format!(".{nines}{suffix}"));
        }
        for text in &inputs {
            for parsed in [Quantity::parse(text), Quantity::parse_api(text)] {
                match parsed {
                    Ok(v) => {
                        let _ = (
                            v.value_ceil(),
                            v.milli_value_ceil(),
                            v.canonical(),
                            v.nanos(),
                        );
                        let _ = (v.is_exact(), v.is_saturated(), v.is_zero(), v.is_negative());
                    }
                    Err(e) => {
                        let _ = e.to_string();
                    }
                }
            }
        }
        for nanos in [i128::MIN, i128::MIN + 1, -1, 0, 1, i128::MAX] {
            for format in [Format::BinarySI, Format::DecimalSI, Format::DecimalExponent] {
                let v = Quantity::from_nanos(nanos, format);
                let _ = (v.value_ceil(), v.milli_value_ceil(), v.canonical());
                let _ = Quantity::from_units(nanos, format).canonical();
            }
        }
        // A few of the extreme ones, pinned.
        assert_eq!(q(&format!("0.{zeros}1")).nanos(), 1);
        assert_eq!(q(&format!("{zeros}1")).nanos(), UNIT);
        assert_eq!(q(&format!("{nines}Ei")).value_ceil(), i128::from(i64::MAX));
        assert_eq!(q("1e-2147483648").nanos(), 1);
        assert!(q("1e2147483647").is_saturated());
        assert_eq!(q(&format!(".{nines}")).nanos(), UNIT);
    }
}
