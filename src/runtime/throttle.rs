//! CFS bandwidth arithmetic (docs/semantics.md, CFS quota): a CPU limit L gives a quota of
//! L × 100 ms per 100 ms period; P runnable threads spend it in L × 100 / P ms of wall time and
//! then wait for the rest of the period. Kept in one place so that every message quotes the same
//! numbers.

use crate::k8s::Quantity;
use crate::text::push_int;

/// The kubelet's CFS period.
pub const PERIOD_MS: f64 = 100.0;

/// A CPU limit in millicores, with the kubelet's 10m floor (1 ms minimum quota).
pub fn limit_millis(limit: &Quantity) -> i128 {
    limit.milli_value_ceil().max(10)
}

/// Quota in milliseconds per period.
pub fn quota_ms(limit_millis: i128) -> f64 {
    limit_millis as f64 / 1000.0 * PERIOD_MS
}

/// ceil(limit) in whole CPUs, as the downward API (`resourceFieldRef` divisor 1) computes it.
pub fn ceil_cpus(limit_millis: i128) -> i128 {
    (limit_millis + 999) / 1000
}

/// Go ≥ 1.25's default: min(node CPUs, max(2, ceil(limit))).
pub fn go125_gomaxprocs(limit_millis: i128, node_cpus: Option<u32>) -> i128 {
    let p = ceil_cpus(limit_millis).max(2);
    match node_cpus {
        Some(n) => p.min(n as i128),
        None => p,
    }
}

/// How many of `threads` run at once: no more than the node has CPUs, when that is known.
pub fn at_once(threads: i128, node_cpus: Option<u32>) -> i128 {
    node_cpus.map_or(threads, |n| threads.min(i128::from(n)))
}

/// Wall time until the quota is spent with `p` threads busy, and the wait that follows.
pub fn burn(limit_millis: i128, p: i128) -> (f64, f64) {
    let quota = quota_ms(limit_millis);
    let spent = (quota / p.max(1) as f64).min(PERIOD_MS);
    (spent, PERIOD_MS - spent)
}

/// `250m` → `0.25 CPU`, `2` → `2 CPUs`.
pub fn describe_cpus(limit_millis: i128) -> String {
    // Written piece by piece: `format!` of an i128 cost several times the arithmetic, for a
    // text most CPU findings carry.
    let mut s = String::with_capacity(16);
    if limit_millis % 1000 == 0 {
        let n = limit_millis / 1000;
        push_int(&mut s, n);
        s.push_str(if n == 1 { " CPU" } else { " CPUs" });
        s
    } else if limit_millis.unsigned_abs() < 1 << 50 {
        // Exactly what `{:.3}` of the float prints for these (the float is within far less
        // than half a thousandth of the value), written from the integer: the whole part, and
        // the three decimals without their trailing zeros (at least one of them is not zero).
        let m = limit_millis.unsigned_abs();
        if limit_millis < 0 {
            s.push('-');
        }
        push_int(&mut s, m / 1000);
        s.push('.');
        for d in [m / 100 % 10, m / 10 % 10, m % 10] {
            s.push(char::from(b'0' + d as u8));
        }
        s.truncate(s.trim_end_matches('0').len());
        s.push_str(" CPU");
        s
    } else {
        let s = format!("{:.3}", limit_millis as f64 / 1000.0);
        format!("{} CPU", s.trim_end_matches('0'))
    }
}

/// Milliseconds with one decimal, trimmed: `25 ms`, `3.1 ms`.
pub fn ms(v: f64) -> String {
    // `{:.1}` rounds the exact binary value, and for most values it falls back to Rust's slow
    // exact algorithm, which was a fifth of GK203's time. Tenths counted in integers round the
    // same way away from ties.
    if let Some(n) = super::round_clear_of_tie(v * 10.0) {
        // Written piecewise: `format!` cost more than the arithmetic (two or three per finding).
        let mut s = String::with_capacity(24);
        s.push_str(itoa::Buffer::new().format(n / 10));
        if n % 10 != 0 {
            s.push('.');
            s.push(char::from(b'0' + (n % 10) as u8));
        }
        s.push_str(" ms");
        return s;
    }
    ms_exact(v)
}

fn ms_exact(v: f64) -> String {
    let s = format!("{v:.1}");
    let s = s.strip_suffix(".0").unwrap_or(&s);
    format!("{s} ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractional_cpus_read_as_the_float_formatter_prints_them() {
        for m in (-3_000i128..20_000).chain([123_456_789, 987_654_321_001, (1 << 50) - 1]) {
            if m % 1000 == 0 {
                continue;
            }
            let s = format!("{:.3}", m as f64 / 1000.0);
            assert_eq!(
                describe_cpus(m),
                format!("{} CPU", s.trim_end_matches('0')),
                "{m}"
            );
        }
    }

    #[test]
    fn numbers_from_the_semantics_doc() {
        // L=2, N=64: spent after ≈3.1 ms, then ≈96.9 ms throttled.
        let (spent, wait) = burn(2000, 64);
        assert_eq!(
            (ms(spent), ms(wait)),
            ("3.1 ms".to_string(), "96.9 ms".to_string())
        );
        // L=0.5, N=2: 25 ms, then 75 ms.
        assert_eq!(burn(500, 2), (25.0, 75.0));
        // L=2.5, N=3: ≈83 ms, then ≈17 ms.
        let (spent, _) = burn(2500, 3);
        assert_eq!(ms(spent), "83.3 ms");
        assert_eq!(go125_gomaxprocs(250, Some(8)), 2);
        assert_eq!(go125_gomaxprocs(2500, Some(8)), 3);
        assert_eq!(go125_gomaxprocs(8500, Some(4)), 4);
        assert_eq!(ceil_cpus(250), 1);
        assert_eq!(ceil_cpus(2001), 3);
        for n in -5i128..70 {
            let plural = if n == 1 { "" } else { "s" };
            assert_eq!(describe_cpus(n * 1000), format!("{n} CPU{plural}"));
        }
        assert_eq!(describe_cpus(250), "0.25 CPU");
        assert_eq!(describe_cpus(2000), "2 CPUs");
        assert_eq!(quota_ms(250), 25.0);
    }

    #[test]
    fn ms_rounds_as_the_exact_formatter_does() {
        // Every spent/wait pair the rules can quote for limits up to 64 CPUs and 1..=256
        // threads, plus ties and values on both sides of them.
        let mut values = Vec::new();
        for limit in (10..=64_000).step_by(10) {
            for p in [1, 2, 3, 4, 6, 7, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256] {
                let (spent, wait) = burn(limit, p);
                values.extend([spent, wait]);
            }
        }
        for t in 0..2000 {
            let tie = t as f64 / 10.0 + 0.05;
            values.extend([
                tie,
                f64::from_bits(tie.to_bits() + 1),
                f64::from_bits(tie.to_bits() - 1),
            ]);
        }
        values.extend([
            0.0,
            0.04,
            0.05,
            0.25,
            0.35,
            99.95,
            1e9,
            3e12,
            f64::INFINITY,
            f64::NAN,
        ]);
        for v in values {
            assert_eq!(ms(v), ms_exact(v), "{v:?}");
        }
    }
}
