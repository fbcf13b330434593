//! Kubernetes resource quantities, parsed exactly (the grammar of apimachinery's `ParseQuantity`).
//!
//! Values are kept as an integer count of nano-units (i128), so `1Gi` equals `1073741824`, `100m`
//! of memory is exactly a tenth of a byte, and comparisons never go through floats. Values finer
//! than a nano-unit round up (as apimachinery's `ScaledValue` does), and values above 2^63−1 units
//! saturate there (as apimachinery caps them).

use std::cmp::Ordering;
use std::fmt;

const NANO: i128 = 1_000_000_000;
/// apimachinery caps quantities at MaxInt64 units.
const MAX_NANOS: i128 = (i64::MAX as i128) * NANO;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    BinarySI,
    DecimalSI,
    DecimalExponent,
}

#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    nanos: i128,
    format: Format,
    exact: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuantityError {
    Empty,
    /// The number part is malformed (no digits, two dots, a space, ...).
    Number,
    /// The suffix is not one Kubernetes knows.
    Suffix(String),
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuantityError::Empty => f.write_str("empty quantity"),
            QuantityError::Number => f.write_str("quantity must start with a number such as 1, 0.5 or .5"),
            QuantityError::Suffix(s) if s == "K" => {
                f.write_str("unknown suffix \"K\" (the decimal kilo suffix is a lowercase k)")
            }
            QuantityError::Suffix(s) => write!(
                f,
                "unknown suffix {s:?} (expected one of Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or an exponent like e3)"
            ),
        }
    }
}

impl std::error::Error for QuantityError {}

/// 10^e as i128, or None when it does not fit.
fn pow10(e: u32) -> Option<i128> {
    10i128.checked_pow(e)
}

impl Quantity {
    /// Strict `ParseQuantity`: no surrounding white space.
    pub fn parse(text: &str) -> Result<Quantity, QuantityError> {
        if text.is_empty() {
            return Err(QuantityError::Empty);
        }
        let bytes = text.as_bytes();
        let mut i = 0;
        let negative = match bytes[0] {
            b'-' => {
                i = 1;
                true
            }
            b'+' => {
                i = 1;
                false
            }
            _ => false,
        };
        let num_start = i;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
            i += 1;
        }
        let number = &text[num_start..i];
        let suffix = &text[i..];
        let (int_part, frac_part) = match number.split_once('.') {
            Some((a, b)) => (a, b),
            None => (number, ""),
        };
        if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) {
            return Err(QuantityError::Number);
        }
        // Multiplier: a power of 2 (binary suffixes) and a power of 10 (decimal ones, exponents).
        let (pow2, pow10_exp, format): (u32, i64, Format) = match suffix {
            "" => (0, 0, Format::DecimalSI),
            "Ki" => (10, 0, Format::BinarySI),
            "Mi" => (20, 0, Format::BinarySI),
            "Gi" => (30, 0, Format::BinarySI),
            "Ti" => (40, 0, Format::BinarySI),
            "Pi" => (50, 0, Format::BinarySI),
            "Ei" => (60, 0, Format::BinarySI),
            "n" => (0, -9, Format::DecimalSI),
            "u" => (0, -6, Format::DecimalSI),
            "m" => (0, -3, Format::DecimalSI),
            "k" => (0, 3, Format::DecimalSI),
            "M" => (0, 6, Format::DecimalSI),
            "G" => (0, 9, Format::DecimalSI),
            "T" => (0, 12, Format::DecimalSI),
            "P" => (0, 15, Format::DecimalSI),
            "E" => (0, 18, Format::DecimalSI),
            s if s.len() > 1 && (s.starts_with('e') || s.starts_with('E')) => {
                let exp = &s[1..];
                let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(QuantityError::Suffix(s.to_string()));
                }
                // Exponents beyond ±100 saturate or vanish either way.
                let e: i64 =
                    exp.parse::<i64>()
                        .unwrap_or(if exp.starts_with('-') { -1000 } else { 1000 });
                (0, e.clamp(-1000, 1000), Format::DecimalExponent)
            }
            s => return Err(QuantityError::Suffix(s.to_string())),
        };
        // Mantissa digits without the dot; the dot shifts the power of ten.
        let digits = format!("{int_part}{frac_part}");
        let digits = digits.trim_start_matches('0');
        let scale = pow10_exp - frac_part.len() as i64 + 9; // power of ten applied to the mantissa, in nanos
        let (nanos, exact) = scaled(digits, scale, pow2);
        let nanos = if negative { -nanos } else { nanos };
        Ok(Quantity {
            nanos,
            format,
            exact,
        })
    }

    /// What the API server accepts for a JSON string: `UnmarshalJSON` trims white space first.
    pub fn parse_api(text: &str) -> Result<Quantity, QuantityError> {
        Quantity::parse(text.trim_matches(|c: char| c.is_ascii_whitespace()))
    }

    pub fn from_nanos(nanos: i128, format: Format) -> Quantity {
        Quantity {
            nanos: nanos.clamp(-MAX_NANOS, MAX_NANOS),
            format,
            exact: true,
        }
    }

    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    pub fn is_exact(&self) -> bool {
        self.exact
    }

    /// apimachinery `Value()`: whole units, rounded up.
    pub fn value_ceil(&self) -> i128 {
        ceil_div(self.nanos, NANO)
    }

    /// apimachinery `MilliValue()`: whole milli-units, rounded up.
    pub fn milli_value_ceil(&self) -> i128 {
        ceil_div(self.nanos, 1_000_000)
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
}

fn ceil_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b > 0 {
        q + 1
    } else {
        q
    }
}

/// digits × 10^scale × 2^pow2, saturated at the cap, rounded up below one nano. Returns (value,
/// exact).
fn scaled(digits: &str, scale: i64, pow2: u32) -> (i128, bool) {
    if digits.is_empty() {
        return (0, true);
    }
    // More than 38 significant digits cannot be represented; such values are absurd anyway.
    if scale >= 0 {
        if digits.len() as i64 + scale > 38 {
            return (MAX_NANOS, true);
        }
        let Ok(m) = digits.parse::<i128>() else {
            return (MAX_NANOS, true);
        };
        let v = pow10(scale as u32)
            .and_then(|p| m.checked_mul(p))
            .and_then(|v| v.checked_mul(1i128 << pow2));
        return (v.map_or(MAX_NANOS, |v| v.min(MAX_NANOS)), true);
    }
    // Negative scale: divide, rounding up. Drop digits that cannot matter beyond i128 range.
    let drop = (-scale) as usize;
    let keep_len = digits.len().saturating_sub(drop);
    let (whole, rest) = digits.split_at(keep_len);
    let mut exact = rest.bytes().all(|b| b == b'0');
    if pow2 > 0 {
        // Binary suffixes have no fractional digits past 9 in practice; multiply before dividing.
        if digits.len() > 30 {
            return (MAX_NANOS, true);
        }
        let m: i128 = digits.parse().unwrap_or(0);
        let num = m.saturating_mul(1i128 << pow2);
        let den = pow10(drop as u32).unwrap_or(i128::MAX);
        exact = num % den == 0;
        return (ceil_div(num, den).min(MAX_NANOS), exact);
    }
    if whole.len() > 38 {
        return (MAX_NANOS, exact);
    }
    let w: i128 = if whole.is_empty() {
        0
    } else {
        whole.parse().unwrap_or(0)
    };
    let v = if exact { w } else { w + 1 };
    (v.min(MAX_NANOS), exact)
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl std::hash::Hash for Quantity {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
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

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn values_from_the_semantics_doc() {
        assert_eq!(q("1Gi").value_ceil(), 1_073_741_824);
        assert_eq!(q("1Gi"), q("1073741824"));
        assert_eq!(q("1"), q("1000m"));
        assert!(q("1G") < q("1Gi"));
        assert_eq!(q("100m").nanos(), 100_000_000);
        assert_eq!(q("100m").value_ceil(), 1);
        assert_eq!(q("1e3").value_ceil(), 1000);
        assert_eq!(q("1E3").value_ceil(), 1000);
        assert_eq!(q("1e-3").milli_value_ceil(), 1);
        assert_eq!(q("1.5e3").value_ceil(), 1500);
        assert_eq!(q("12e-1").milli_value_ceil(), 1200);
        assert_eq!(q("+1Gi"), q("1Gi"));
        assert_eq!(q("01").value_ceil(), 1);
        assert_eq!(q("1.").value_ceil(), 1);
        assert_eq!(q(".5").milli_value_ceil(), 500);
        assert_eq!(q("1u").nanos(), 1000);
        assert_eq!(q("1n").nanos(), 1);
        assert_eq!(q("0.1m").nanos(), 100_000);
        assert_eq!(q("0.1m").milli_value_ceil(), 1);
        assert_eq!(q("1.5Gi"), q("1536Mi"));
        assert_eq!(q("1.9Gi").value_ceil(), 2_040_109_466);
        assert!(!q("1.9Gi").is_exact() || q("1.9Gi").nanos() % NANO != 0);
        assert!(q("-1").is_negative());
        assert_eq!(q("8Ei").value_ceil(), i64::MAX as i128);
        assert_eq!(q("250m").milli_value_ceil(), 250);
        assert_eq!(q("1E").value_ceil(), 1_000_000_000_000_000_000);
        assert_eq!(q("1k").value_ceil(), 1000);
    }

    #[test]
    fn invalid_inputs() {
        for s in [
            "", "1K", "1gi", "1GB", "1e", " 1Gi", "1Gi ", "1 Gi", "0x10", "1_000", "Gi", ".", "+",
            "1..2", "1e+",
        ] {
            assert!(Quantity::parse(s).is_err(), "{s:?} must be invalid");
        }
        assert_eq!(
            Quantity::parse("1K").unwrap_err().to_string(),
            "unknown suffix \"K\" (the decimal kilo suffix is a lowercase k)"
        );
        assert!(Quantity::parse_api(" 1Gi ").is_ok());
        assert!(Quantity::parse_api("1 Gi").is_err());
    }

    #[test]
    fn never_panics_on_odd_input() {
        let long = "9".repeat(500);
        for s in [
            "1e999999999",
            "1e-999999999",
            long.as_str(),
            "99999999999999999999999999999999999999999Ei",
            "ü",
            "1.5.5",
            "-",
            "e3",
            "1e99999999999999999999999",
            "0.0000000000000000000001",
            "0.0000000000000000000001Ki",
        ] {
            let _ = Quantity::parse(s);
        }
        assert_eq!(q("1e999999999").value_ceil(), i64::MAX as i128);
        assert_eq!(q("0.0000000000000000000001").nanos(), 1);
    }
}
