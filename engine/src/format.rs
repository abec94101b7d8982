//! Numbers formatted for people: significant figures, thousands separators, durations in
//! µs, ms or s, decimal gigabytes, dollars and percentages.
//!
//! Every helper is total: a value that is not finite formats as `n/a` instead of panicking.
//! Rounding goes through Rust's own float formatting, which is exact and identical natively
//! and in WASM, so the same value always yields the same string.

/// Rounds `v` to `n` significant figures (at least one).
pub fn round_sig(v: f64, n: u32) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    let digits = n.max(1) as usize - 1;
    format!("{v:.digits$e}").parse().unwrap_or(v)
}

/// Formats `v` to `n` significant figures, trailing zeros trimmed, with thousands
/// separators: `sig(32.478e-6 * 1e6, 3)` is `32.5`, `sig(3869.3, 3)` is `3,870`.
pub fn sig(v: f64, n: u32) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let r = round_sig(v, n);
    let decimals = (n.max(1) as i32 - 1 - exponent(r)).max(0) as u32;
    fixed(r, decimals)
}

/// Formats `v` with at most `decimals` decimal places, trailing zeros trimmed, with
/// thousands separators: `fixed(7.468, 1)` is `7.5`, `fixed(5.0, 2)` is `5`.
pub fn fixed(v: f64, decimals: u32) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let d = decimals as usize;
    let mut s = format!("{v:.d$}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    group_thousands(&s)
}

/// Formats `v` rounded to a whole number, with thousands separators: `int(416103.2)` is `416,103`.
pub fn int(v: f64) -> String {
    fixed(v, 0)
}

/// Formats a figure typed as an input: whole numbers exactly (`8,030,261,248`), others to
/// four significant figures (`0.92`, `3.35`).
pub fn num(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        int(v)
    } else {
        sig(v, 4)
    }
}

/// Formats a duration in seconds to `n` significant figures in µs, ms or s, whichever keeps
/// the number between 1 and 1,000: `duration(32.478e-6, 3)` is `32.5 µs`.
pub fn duration(seconds: f64, n: u32) -> String {
    if !seconds.is_finite() {
        return "n/a".to_string();
    }
    let r = round_sig(seconds, n).abs();
    if r == 0.0 {
        "0 s".to_string()
    } else if r < 1e-3 {
        format!("{} µs", sig(seconds * 1e6, n))
    } else if r < 1.0 {
        format!("{} ms", sig(seconds * 1e3, n))
    } else {
        format!("{} s", sig(seconds, n))
    }
}

/// Formats bytes as decimal gigabytes to `n` significant figures: `gb(20.779e9, 4)` is `20.78 GB`.
pub fn gb(bytes: f64, n: u32) -> String {
    format!("{} GB", sig(bytes / 1e9, n))
}

/// Formats dollars: whole dollars when the amount rounds to whole dollars or is $100 or more
/// (`$20`), cents otherwise (`$0.44`, `$2.50`), and two significant figures below a cent.
pub fn money(usd: f64) -> String {
    if !usd.is_finite() {
        return "n/a".to_string();
    }
    let sign = if usd < 0.0 { "-" } else { "" };
    let a = usd.abs();
    let cents = (a * 100.0).round();
    let body = if a >= 100.0 || (cents % 100.0 == 0.0 && cents > 0.0) || a == 0.0 {
        int(a)
    } else if cents == 0.0 {
        sig(a, 2)
    } else {
        group_thousands(&format!("{a:.2}"))
    };
    format!("{sign}${body}")
}

/// Formats a fraction as a percentage: whole percent from 1 % up (`percent(0.0838)` is `8 %`),
/// one significant figure below that (`0.4 %`).
pub fn percent(fraction: f64) -> String {
    if !fraction.is_finite() {
        return "n/a".to_string();
    }
    let p = fraction * 100.0;
    if p == 0.0 || p.abs() >= 0.995 {
        format!("{} %", int(p))
    } else {
        format!("{} %", sig(p, 1))
    }
}

/// Inserts a comma every three digits in the integer part of a plain decimal string.
pub fn group_thousands(s: &str) -> String {
    let (sign, rest) = match s.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", s),
    };
    let (whole, frac) = match rest.find('.') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if !whole.bytes().all(|b| b.is_ascii_digit()) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + whole.len() / 3);
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    // A value that rounds to zero prints without a minus sign.
    let zero = whole.bytes().all(|b| b == b'0') && frac.bytes().all(|b| b == b'0' || b == b'.');
    let sign = if zero { "" } else { sign };
    format!("{sign}{out}{frac}")
}

/// The decimal exponent of `v` as scientific notation writes it (0 for zero).
fn exponent(v: f64) -> i32 {
    if v == 0.0 || !v.is_finite() {
        return 0;
    }
    let s = format!("{v:e}");
    s.rsplit('e')
        .next()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks each (formatted, expected) pair.
    fn check(cases: &[(String, &str)]) {
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn figures_format_as_the_brief_writes_them() {
        check(&[
            (duration(32.478e-6, 3), "32.5 µs"),
            (duration(32.478e-3, 2), "32 ms"),
            (duration(8.27e-3, 2), "8.3 ms"),
            (duration(5.0, 2), "5 s"),
            (duration(0.99996e-3, 3), "1 ms"),
            (gb(20_779_114_496.0, 4), "20.78 GB"),
            (int(3869.3), "3,869"),
            (int(416_103.0), "416,103"),
            (sig(1.6239, 3), "1.62"),
            (sig(3869.3, 3), "3,870"),
            (sig(99.96, 3), "100"),
            (fixed(7.468, 1), "7.5"),
            (fixed(31.25, 2), "31.25"),
            (money(20.0), "$20"),
            (money(0.4444), "$0.44"),
            (money(2.5), "$2.50"),
            (money(0.0018), "$0.0018"),
            (money(1234.7), "$1,235"),
            (percent(0.0838), "8 %"),
            (percent(0.004), "0.4 %"),
            (num(8_030_261_248.0), "8,030,261,248"),
            (num(0.92), "0.92"),
            (fixed(-0.004, 2), "0"),
            (sig(f64::NAN, 3), "n/a"),
            (money(f64::INFINITY), "n/a"),
        ]);
    }
}
