//! Random tables for the CSV families: a theme (shop stock, staff, expenses, ...) gives a
//! key column of unique names, a group column with a few repeated values and number
//! columns; each table picks its own column names among synonyms, its column order, its
//! groups and its values.

use super::text::{money, Names};
use super::words;
use crate::eval::rng::Rng;

/// Where a key column's values come from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Keys {
    /// Distinct names from this list.
    Pool(&'static [&'static str]),
    /// `PREFIX` followed by consecutive numbers from a random start (`INV-1042`).
    Ids(&'static str),
}

/// A number column: its possible names, range, and whether it holds cents (written with
/// two decimals).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NumCol {
    pub names: &'static [&'static str],
    pub lo: i64,
    pub hi: i64,
    pub cents: bool,
}

/// A kind of table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Theme {
    pub key_names: &'static [&'static str],
    pub keys: Keys,
    pub group_names: &'static [&'static str],
    pub groups: &'static [&'static str],
    pub nums: &'static [NumCol],
    /// File stems that fit the theme.
    pub stems: &'static [&'static str],
}

/// A generated table.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Column indexes.
    pub key: usize,
    pub group: usize,
    pub nums: Vec<usize>,
    pub stems: &'static [&'static str],
}

const fn n(names: &'static [&'static str], lo: i64, hi: i64, cents: bool) -> NumCol {
    NumCol {
        names,
        lo,
        hi,
        cents,
    }
}

/// English themes.
pub(crate) const THEMES: &[Theme] = &[
    Theme {
        key_names: &["product", "item", "name"],
        keys: Keys::Pool(words::PRODUCE),
        group_names: &["supplier", "vendor", "source"],
        groups: &["greenway", "farmco", "sunfield", "hillside", "riverbend"],
        nums: &[
            n(&["price", "unit_price", "cost"], 40, 990, true),
            n(&["qty", "quantity", "units", "stock"], 1, 60, false),
        ],
        stems: &["inventory", "stock", "pantry", "catalog", "produce"],
    },
    Theme {
        key_names: &["name", "employee", "person"],
        keys: Keys::Pool(words::PEOPLE),
        group_names: &["dept", "department", "team"],
        groups: &["sales", "support", "finance", "design", "ops", "legal"],
        nums: &[
            n(&["salary", "pay", "wage"], 1800, 6500, false),
            n(&["age"], 21, 64, false),
            n(&["hours", "hours_per_week"], 8, 45, false),
        ],
        stems: &["staff", "payroll", "employees", "team", "roster"],
    },
    Theme {
        key_names: &["receipt", "ref", "id"],
        keys: Keys::Ids("R-"),
        group_names: &["category", "kind", "type"],
        groups: &["food", "travel", "rent", "books", "fuel", "phone", "gifts"],
        nums: &[n(&["amount", "total", "cost"], 150, 25_000, true)],
        stems: &["expenses", "budget", "receipts", "spending", "ledger"],
    },
    Theme {
        key_names: &["student", "pupil", "name"],
        keys: Keys::Pool(words::PEOPLE),
        group_names: &["class", "group", "house"],
        groups: &["red", "blue", "green", "yellow"],
        nums: &[
            n(&["score", "mark", "points"], 0, 100, false),
            n(&["age"], 10, 18, false),
            n(&["absences", "days_absent"], 0, 12, false),
        ],
        stems: &["grades", "scores", "class", "results", "marks"],
    },
    Theme {
        key_names: &["city", "town"],
        keys: Keys::Pool(words::CITIES),
        group_names: &["region", "zone"],
        groups: &["north", "south", "east", "west", "central"],
        nums: &[
            n(&["population", "inhabitants"], 1200, 98_000, false),
            n(&["area_km2", "area"], 5, 400, false),
            n(&["rainfall_mm", "rainfall"], 200, 1600, false),
        ],
        stems: &["cities", "towns", "places", "census"],
    },
    Theme {
        key_names: &["title", "book"],
        keys: Keys::Pool(words::TITLES),
        group_names: &["genre", "shelf", "section"],
        groups: &["novel", "poetry", "history", "science", "travel"],
        nums: &[
            n(&["pages", "page_count"], 80, 900, false),
            n(&["year", "published"], 1900, 2024, false),
            n(&["copies", "in_stock"], 1, 12, false),
        ],
        stems: &["books", "library", "shelf", "reading_list"],
    },
    Theme {
        key_names: &["order", "order_id", "id"],
        keys: Keys::Ids(""),
        group_names: &["status", "state"],
        groups: &["shipped", "pending", "cancelled", "returned"],
        nums: &[
            n(&["total", "amount", "value"], 500, 40_000, true),
            n(&["items", "qty"], 1, 9, false),
        ],
        stems: &["orders", "sales", "shop", "webshop", "purchases"],
    },
];

/// French themes (`;`-separated files, as French spreadsheets write them).
pub(crate) const FR_THEMES: &[Theme] = &[
    Theme {
        key_names: &["produit", "article"],
        keys: Keys::Pool(words::FR_PRODUITS),
        group_names: &["ville", "magasin"],
        groups: words::FR_VILLES,
        nums: &[
            n(&["quantite", "quantité", "stock"], 1, 80, false),
            n(&["montant", "ventes", "chiffre"], 20, 900, false),
        ],
        stems: &["ventes", "stock", "inventaire", "commandes"],
    },
    Theme {
        key_names: &["prenom", "prénom", "nom"],
        keys: Keys::Pool(words::FR_PRENOMS),
        group_names: &["equipe", "équipe", "service"],
        groups: &["compta", "accueil", "cuisine", "atelier", "vente"],
        nums: &[
            n(&["heures", "heures_semaine"], 5, 40, false),
            n(&["age", "âge"], 19, 63, false),
            n(&["salaire"], 1500, 4200, false),
        ],
        stems: &["equipe", "personnel", "planning", "salaries"],
    },
];

impl Table {
    /// A table of `rows` rows of `theme` (rows ≤ the theme's key pool).
    pub(crate) fn generate(rng: &mut Rng, theme: &Theme, rows: usize) -> Table {
        let key_name = rng.pick(theme.key_names).to_string();
        let group_name = rng.pick(theme.group_names).to_string();
        let num_names: Vec<String> = theme
            .nums
            .iter()
            .map(|c| rng.pick(c.names).to_string())
            .collect();
        let keys: Vec<String> = match theme.keys {
            Keys::Pool(pool) => rng
                .sample(pool, rows.min(pool.len()))
                .into_iter()
                .map(str::to_string)
                .collect(),
            Keys::Ids(prefix) => {
                let start = rng.range(100, 9000);
                (0..rows as i64)
                    .map(|i| format!("{prefix}{}", start + i))
                    .collect()
            }
        };
        let group_count = rng.range(3, 4.min(theme.groups.len() as i64)) as usize;
        let groups = rng.sample(theme.groups, group_count);
        // Column order: key first most of the time, else shuffled.
        let width = 2 + theme.nums.len();
        let mut order: Vec<usize> = (0..width).collect();
        if rng.chance(40) {
            rng.shuffle(&mut order);
        }
        let mut logical: Vec<String> = vec![key_name, group_name];
        logical.extend(num_names);
        let header: Vec<String> = order.iter().map(|&i| logical[i].clone()).collect();
        let position = |logical_index: usize| {
            order
                .iter()
                .position(|&i| i == logical_index)
                .unwrap_or(logical_index)
        };
        let mut table_rows = Vec::new();
        for (r, key) in keys.iter().enumerate() {
            let mut logical_row: Vec<String> = vec![key.clone()];
            // Every group appears: the first rows take them in turn, then at random.
            let group = if r < groups.len() {
                groups[r]
            } else {
                *rng.pick(&groups)
            };
            logical_row.push(group.to_string());
            for c in theme.nums {
                let v = rng.range(c.lo, c.hi);
                logical_row.push(if c.cents { money(v) } else { v.to_string() });
            }
            table_rows.push(order.iter().map(|&i| logical_row[i].clone()).collect());
        }
        // The group order of the first rows should not give the groups' sorted order away.
        rng.shuffle(&mut table_rows);
        Table {
            header,
            rows: table_rows,
            key: position(0),
            group: position(1),
            nums: (0..theme.nums.len()).map(|i| position(2 + i)).collect(),
            stems: theme.stems,
        }
    }

    /// A file name fitting the table.
    pub(crate) fn file_name(&self, rng: &mut Rng, names: &mut Names, ext: &str) -> String {
        let pool = if rng.chance(70) {
            self.stems
        } else {
            words::DATA_STEMS
        };
        names.file(rng, pool, ext)
    }

    /// The table as CSV text with `separator`, a final newline.
    pub(crate) fn csv(&self, separator: char) -> String {
        let sep = separator.to_string();
        let mut s = self.header.join(&sep);
        s.push('\n');
        for row in &self.rows {
            s.push_str(&row.join(&sep));
            s.push('\n');
        }
        s
    }

    /// A number cell as a number.
    pub(crate) fn value(&self, row: usize, col: usize) -> f64 {
        self.rows[row][col].parse().unwrap_or(0.0)
    }

    /// A number column as numbers.
    pub(crate) fn column(&self, col: usize) -> Vec<f64> {
        (0..self.rows.len()).map(|r| self.value(r, col)).collect()
    }

    /// The distinct values of the group column, sorted.
    pub(crate) fn groups(&self) -> Vec<String> {
        let mut g: Vec<String> = self.rows.iter().map(|r| r[self.group].clone()).collect();
        g.sort();
        g.dedup();
        g
    }

    /// Whether the number column `col` has one largest (`max`) or smallest value.
    pub(crate) fn unique_extreme(&self, col: usize, max: bool) -> Option<usize> {
        let values = self.column(col);
        let best = if max {
            values.iter().copied().fold(f64::MIN, f64::max)
        } else {
            values.iter().copied().fold(f64::MAX, f64::min)
        };
        let at: Vec<usize> = (0..values.len()).filter(|&i| values[i] == best).collect();
        (at.len() == 1).then(|| at[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_have_unique_keys_every_group_and_their_columns_where_said() {
        for seed in 0..50 {
            let mut rng = Rng::new(seed);
            let theme = rng.pick(THEMES);
            let t = Table::generate(&mut rng, theme, 8);
            assert_eq!(t.rows.len(), 8);
            let mut header = t.header.clone();
            header.sort();
            header.dedup();
            assert_eq!(header.len(), t.header.len(), "{:?}", t.header);
            let mut keys: Vec<&String> = t.rows.iter().map(|r| &r[t.key]).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), 8);
            assert!(t.groups().len() >= 3);
            for &c in &t.nums {
                assert!(t.rows.iter().all(|r| r[c].parse::<f64>().is_ok()));
            }
            assert_eq!(t.csv(',').lines().count(), 9);
        }
    }
}
