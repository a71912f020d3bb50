//! Tables for people: columns aligned, at most 80 characters wide (long
//! names elided in the middle), numbers written the way people write them.

/// The widest a table line gets.
pub const WIDTH: usize = 80;

/// `s` shortened to `width` characters by replacing its middle with `…`.
pub fn elide_middle(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width || width < 3 {
        return s.to_string();
    }
    let keep = width - 1;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// Rows under a header, two spaces before each column; `right[i]` aligns
/// column `i` right. Column 0 (names) is elided in the middle so that lines
/// fit [`WIDTH`], down to 12 characters.
pub fn render<const N: usize>(header: [&str; N], rows: &[[String; N]], right: [bool; N]) -> String {
    let mut w = header.map(|h| h.chars().count());
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let others: usize = w[1..].iter().map(|x| x + 2).sum();
    let room = WIDTH.saturating_sub(2 + others).max(12);
    w[0] = w[0].min(room).max(header[0].len());
    let mut s = String::new();
    let mut line = |cells: [&str; N]| {
        for (i, c) in cells.iter().enumerate() {
            let c = if i == 0 {
                elide_middle(c, w[0])
            } else {
                c.to_string()
            };
            s.push_str("  ");
            let pad = w[i].saturating_sub(c.chars().count());
            if right[i] {
                s.push_str(&" ".repeat(pad));
                s.push_str(&c);
            } else {
                s.push_str(&c);
                if i + 1 < N {
                    s.push_str(&" ".repeat(pad));
                }
            }
        }
        s.push('\n');
    };
    line(header);
    for r in rows {
        line(std::array::from_fn(|i| r[i].as_str()));
    }
    s
}

/// A number as people write it: `0`, `1.0`, `-2.5`, `0.1235`, `123456.0`,
/// `1.235e-7`: at most four significant digits after the point, an
/// exponent only for very large or very small magnitudes.
pub fn number(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return "0.0".into();
    }
    let a = v.abs();
    if (1e-3..1e7).contains(&a) {
        let digits = (4 - 1 - a.log10().floor() as i32).clamp(1, 6) as usize;
        let mut s = format!("{v:.digits$}");
        while s.ends_with('0') && !s.ends_with(".0") {
            s.pop();
        }
        return s;
    }
    let s = format!("{v:.3e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let mut m = m.to_string();
            while m.ends_with('0') {
                m.pop();
            }
            if m.ends_with('.') {
                m.pop();
            }
            format!("{m}e{e}")
        }
        None => s,
    }
}

/// `1.5 KiB`, `3.0 MiB`, `12 B`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_people_write_them() {
        assert_eq!(number(1.0), "1.0");
        assert_eq!(number(-2.5), "-2.5");
        assert_eq!(number(0.123456), "0.1235");
        assert_eq!(number(0.0), "0.0");
        assert_eq!(number(123456.0), "123456.0");
        assert_eq!(number(1.2345e-7), "1.235e-7");
        assert_eq!(number(3.0e12), "3e12");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn long_names_are_elided_to_fit() {
        let long = format!("{}/end", "x".repeat(200));
        let rows = [[long.clone(), "f32".to_string()], ["w".into(), "i8".into()]];
        let t = render(["name", "dtype"], &rows, [false, false]);
        assert!(t.lines().all(|l| l.chars().count() <= WIDTH), "{t}");
        assert!(t.contains("…") && t.contains("x/end"), "{t}");
        assert_eq!(elide_middle("abcdefghij", 5), "ab…ij");
        assert_eq!(elide_middle("abc", 5), "abc");
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 20), "3.0 MiB");
    }
}
