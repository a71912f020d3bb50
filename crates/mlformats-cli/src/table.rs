//! Tables for people and for pipes: columns aligned; on a terminal, lines
//! fit its width (long names shortened, keeping their distinctive tail);
//! piped or with `--wide`, names in full; numbers written the way people
//! write them.

use std::io::IsTerminal;

/// The width used on a terminal whose width cannot be found.
pub const DEFAULT_WIDTH: usize = 80;

/// The width tables must fit: `None` (names in full) when `wide` or when
/// stdout is not a terminal; on a terminal, `COLUMNS` when set to a number,
/// else the terminal's width, else [`DEFAULT_WIDTH`].
pub fn width(wide: bool) -> Option<usize> {
    if wide || !std::io::stdout().is_terminal() {
        return None;
    }
    terminal_width(std::env::var("COLUMNS").ok().as_deref())
}

/// The width for a terminal given `COLUMNS`'s value.
fn terminal_width(columns: Option<&str>) -> Option<usize> {
    if let Some(n) = columns.and_then(|c| c.trim().parse::<usize>().ok())
        && n > 0
    {
        return Some(n);
    }
    let (_, cols) = console::Term::stdout().size_checked()?;
    Some(if cols > 0 {
        cols as usize
    } else {
        DEFAULT_WIDTH
    })
}

/// `s` shortened to `width` characters: a quarter of the room for its
/// head, `…`, and the rest for its tail (what tells `…/conv3/W` from
/// `…/conv3/b`).
pub fn elide(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width || width < 3 {
        return s.to_string();
    }
    let keep = width - 1;
    let head = keep / 4;
    let tail = keep - head;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// A name as a table shows it: as it is, unless it holds control
/// characters (a newline would break the row), which are escaped as Rust
/// and JSON write them (`\n`, `\t`, `\u{1b}`); `--json` has every name exact.
pub fn printable(name: &str) -> String {
    if name.chars().any(char::is_control) {
        name.escape_debug().to_string()
    } else {
        name.to_string()
    }
}

/// Rows under a header, two spaces before each column; `right[i]` aligns
/// column `i` right. With a `width`, column 0 (names) is shortened so that
/// lines fit it, down to 12 characters; without, nothing is shortened.
pub fn render<const N: usize>(
    header: [&str; N],
    rows: &[[String; N]],
    right: [bool; N],
    width: Option<usize>,
) -> String {
    let mut w = header.map(|h| h.chars().count());
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            let n = if i == 0 {
                printable(c).chars().count()
            } else {
                c.chars().count()
            };
            w[i] = w[i].max(n);
        }
    }
    if let Some(width) = width {
        let others: usize = w[1..].iter().map(|x| x + 2).sum();
        let room = width.saturating_sub(2 + others).max(12);
        w[0] = w[0].min(room).max(header[0].len());
    }
    let mut s = String::new();
    let mut line = |cells: [&str; N]| {
        for (i, c) in cells.iter().enumerate() {
            let c = if i == 0 {
                elide(&printable(c), w[0])
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

/// A count with thousands separated by commas: `1,234,567`.
pub fn count(n: u64) -> String {
    let d = n.to_string();
    let mut s = String::with_capacity(d.len() + d.len() / 3);
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            s.push(',');
        }
        s.push(c);
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
    fn long_names_are_shortened_to_fit_keeping_their_tail() {
        let long = format!("{}/conv3/W", "x".repeat(200));
        let rows = [[long.clone(), "f32".to_string()], ["w".into(), "i8".into()]];
        let t = render(["name", "dtype"], &rows, [false, false], Some(60));
        assert!(t.lines().all(|l| l.chars().count() <= 60), "{t}");
        assert!(t.contains("…") && t.contains("xx/conv3/W  f32"), "{t}");
        assert_eq!(elide("abcdefghij", 5), "a…hij");
        assert_eq!(elide("abc", 5), "abc");
        // without a width nothing is shortened
        let t = render(["name", "dtype"], &rows, [false, false], None);
        assert!(t.contains(&long) && !t.contains('…'), "{t}");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("a\tb\n"), "a\\tb\\n");
        assert_eq!(printable("fc/W"), "fc/W");
        let t = render(["name"], &[["x\ny".to_string()]], [false], None);
        assert_eq!(t.lines().count(), 2, "{t}");
    }

    #[test]
    fn columns_sets_the_terminal_width() {
        assert_eq!(terminal_width(Some("132")), Some(132));
        assert_eq!(terminal_width(Some(" 40 ")), Some(40));
    }

    #[test]
    fn counts_with_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1234567), "1,234,567");
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 20), "3.0 MiB");
    }
}
