//! `generate_numbers`: numbers with a property written into a file: primes in a range,
//! multiples, squares, Fibonacci numbers, a countdown, numbers divisible by one number but
//! not another, powers.

use super::text::{py, Names};
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "generate_numbers",
    category: Category::Single,
    language: "en",
    about: "numbers with a property written into a file: primes in a range, multiples, squares, \
            Fibonacci numbers, a countdown, divisible by one number but not another, powers",
    generate,
};

fn is_prime(n: i64) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| n % d != 0)
}

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let out = names.file(
        rng,
        &[
            "numbers", "list", "sequence", "series", "out", "values", "result",
        ],
        "txt",
    );
    let sep = if rng.chance(70) {
        "one per line"
    } else {
        "separated by commas"
    };
    let (variant, numbers, phrasings, code): (&str, Vec<i64>, Vec<String>, String) = match rng
        .below(7)
    {
        0 => {
            let a = rng.range(2, 60);
            let b = a + rng.range(15, 80);
            (
                "primes",
                (a..=b).filter(|&n| is_prime(n)).collect(),
                vec![
                    format!("Which numbers between {a} and {b} are prime? List them in {out}, {sep}, smallest first."),
                    format!("primes between {a} and {b} (inclusive) -> {out}, {sep}"),
                    format!("I need every prime number in the range {a}..{b} in a file called {out}, in increasing order, {sep}."),
                ],
                format!("ns = [n for n in range({a}, {b} + 1) if n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))]"),
            )
        }
        1 => {
            let k = rng.range(3, 13);
            let a = rng.range(1, 40);
            let b = a + rng.range(30, 120);
            (
                "multiples",
                (a..=b).filter(|n| n % k == 0).collect(),
                vec![
                    format!("Write all multiples of {k} between {a} and {b} (both included) into {out}, {sep}, in increasing order."),
                    format!("multiples of {k} from {a} to {b} -> {out}, ascending, {sep}"),
                    format!("List the numbers between {a} and {b} that divide evenly by {k}. Put them in {out}, {sep}, smallest first."),
                ],
                format!("ns = [n for n in range({a}, {b} + 1) if n % {k} == 0]"),
            )
        }
        2 => {
            let n = rng.range(4, 15);
            (
                "squares",
                (1..=n).map(|i| i * i).collect(),
                vec![
                    format!("Write the squares of the numbers 1 to {n} into {out}, {sep}."),
                    format!("1², 2², ... {n}² -> {out} ({sep})"),
                    format!("Please make {out} holding the square of every whole number from 1 up to {n}, in order, {sep}."),
                ],
                format!("ns = [i * i for i in range(1, {n} + 1)]"),
            )
        }
        3 => {
            let n = rng.range(6, 20) as usize;
            let mut f = vec![1i64, 1];
            while f.len() < n {
                let next = f[f.len() - 1] + f[f.len() - 2];
                f.push(next);
            }
            (
                "fibonacci",
                f,
                vec![
                    format!("Write the first {n} Fibonacci numbers, starting 1, 1, 2, into {out}, {sep}."),
                    format!("fibonacci sequence (1, 1, 2, 3, ...), first {n} terms -> {out}, {sep}"),
                    format!("Put the Fibonacci numbers in {out}: begin with 1 and 1, each next one is the sum of the two before, {n} numbers in all, {sep}."),
                ],
                format!("ns = [1, 1]\nwhile len(ns) < {n}:\n    ns.append(ns[-1] + ns[-2])"),
            )
        }
        4 => {
            let step = rng.range(1, 4);
            let b = rng.range(20, 90);
            let a = b - step * rng.range(5, (b / step).clamp(5, 15));
            (
                "countdown",
                (0..).map(|i| b - i * step).take_while(|&v| v >= a).collect(),
                vec![
                    format!("Count down from {b} to {a} in steps of {step} and write the numbers into {out}, {sep}."),
                    format!("{b}, {}, ... down to {a} (step {step}) -> {out}, {sep}", b - step),
                    format!("I want a countdown in {out}: start at {b}, subtract {step} each time, stop at {a} or just above it. {sep}, please.", sep = capital(sep)),
                ],
                format!("ns = list(range({b}, {a} - 1, -{step}))"),
            )
        }
        5 => {
            let x = rng.range(2, 7);
            let y = loop {
                let y = rng.range(2, 9);
                if y != x && y % x != 0 && x % y != 0 {
                    break y;
                }
            };
            let top = rng.range(30, 100);
            (
                "divisible",
                (1..=top).filter(|n| n % x == 0 && n % y != 0).collect(),
                vec![
                    format!("Write every number from 1 to {top} that is divisible by {x} but not by {y} into {out}, {sep}, ascending."),
                    format!("n in 1..{top} where n % {x} == 0 and n % {y} != 0 -> {out}, {sep}"),
                    format!("Which numbers up to {top} can be divided by {x} but not by {y}? Save them in {out}, smallest first, {sep}."),
                ],
                format!("ns = [n for n in range(1, {top} + 1) if n % {x} == 0 and n % {y} != 0]"),
            )
        }
        _ => {
            let k = rng.range(2, 5);
            let limit = rng.range(200, 20_000);
            (
                "powers",
                (0..).map(|e| k.pow(e)).take_while(|&v| v <= limit).collect(),
                vec![
                    format!("Write the powers of {k} from 1 ({k}^0) up to {limit} into {out}, {sep}."),
                    format!("{k}^0, {k}^1, {k}^2 ... while <= {limit} -> {out}, {sep}"),
                    format!("List 1, {k}, {}, ... (each {k} times the one before) as long as they stay at or below {limit}; write them into {out}, {sep}.", k * k),
                ],
                format!("ns = []\nv = 1\nwhile v <= {limit}:\n    ns.append(v)\n    v *= {k}"),
            )
        }
    };
    let expected: Vec<String> = numbers.iter().map(|n| n.to_string()).collect();
    let joiner = if sep.starts_with("one") {
        "'\\n'"
    } else {
        "', '"
    };
    let mut b = Builder::new(FAMILY.name, FAMILY.category, variant);
    b.items_are(&out, &expected, true)
        .phrased(rng, phrasings)
        .reference(&format!(
            "{code}\nwith open({}, 'w') as f:\n    f.write({joiner}.join(str(n) for n in ns) + '\\n')\n",
            py(&out)
        ));
    b.build()
}

fn capital(s: &str) -> String {
    super::text::capitalised(s)
}
