//! `fr_extract`: extraction tasks written in French, on French data: the sum of a column
//! of a `;`-separated file, how many rows belong to a town or team, the row with the
//! largest value, how many lines of a French text contain a word.

use super::table::{Table, FR_THEMES};
use super::text::{lines, py, py_csv_rows, py_write, sentence, Names, PY_NUM};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "fr_extract",
    category: Category::Single,
    language: "fr",
    about: "extraction written in French on French data: the sum of a column of a `;`-separated \
            file, how many rows belong to a group, the row with the largest value, how many \
            lines of a French text contain a word",
    generate,
};

const OUT_STEMS: &[&str] = &["resultat", "reponse", "total", "nombre", "somme", "sortie"];

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let out = names.plain(rng, OUT_STEMS, "txt");
    if rng.chance(25) {
        return words_in_text(rng, &mut names, &out);
    }
    let theme = rng.pick(FR_THEMES);
    let size = rng.range(5, 14) as usize;
    let t = Table::generate(rng, theme, size);
    let file = names.plain(rng, t.stems, "csv");
    let rows = py_csv_rows(&file, ';');
    let mut b;
    match rng.below(3) {
        0 => {
            let col = *rng.pick(&t.nums);
            let c = t.header[col].clone();
            let total: f64 = t.column(col).iter().sum();
            b = Builder::new(FAMILY.name, FAMILY.category, "somme");
            b.number_is(&out, total, 0.005).phrased(
                rng,
                vec![
                    format!("Dans {file}, quelle est la somme de la colonne {c} ? Écris uniquement le nombre dans {out}."),
                    format!("additionne toutes les valeurs de {c} dans {file} et mets le total dans {out}"),
                    format!(
                        "Le fichier {file} (séparé par des points-virgules) a une colonne {c}. \
                         Peux-tu calculer le total de cette colonne et l'enregistrer, sans \
                         rien d'autre, dans {out} ?"
                    ),
                ],
            );
            b.reference(&format!(
                "{rows}{PY_NUM}{}",
                py_write(
                    &out,
                    &format!("num(sum(float(r[{}]) for r in rows))", py(&c))
                )
            ));
        }
        1 => {
            let g = rng.pick(&t.groups()).clone();
            let gc = t.header[t.group].clone();
            let count = t.rows.iter().filter(|r| r[t.group] == g).count();
            b = Builder::new(FAMILY.name, FAMILY.category, "compte");
            b.number_is(&out, count as f64, 0.0).phrased(
                rng,
                vec![
                    format!("Combien de lignes de {file} ont « {g} » dans la colonne {gc} ? Écris le nombre dans {out}."),
                    format!("compte les lignes de {file} où {gc} = {g}, résultat dans {out}"),
                    format!(
                        "J'aimerais savoir combien d'entrées de {file} concernent {g} (colonne \
                         {gc}). Mets seulement ce nombre dans {out}, merci."
                    ),
                ],
            );
            b.reference(&format!(
                "{rows}{}",
                py_write(
                    &out,
                    &format!("str(sum(1 for r in rows if r[{}] == {}))", py(&gc), py(&g))
                )
            ));
        }
        _ => {
            let col = *rng.pick(&t.nums);
            let mut t = t.clone();
            if t.unique_extreme(col, true).is_none() {
                // A tie: make the first row's value the largest.
                let top = t.column(col).iter().copied().fold(f64::MIN, f64::max);
                t.rows[0][col] = format!("{}", top as i64 + 1);
            }
            return extreme(rng, &t, &file, &out, col);
        }
    }
    b.input(&file, &t.csv(';'));
    b.build()
}

fn extreme(rng: &mut Rng, t: &Table, file: &str, out: &str, col: usize) -> Instance {
    let row = t.unique_extreme(col, true).unwrap_or(0);
    let (kc, c) = (&t.header[t.key], &t.header[col]);
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "max");
    b.input(file, &t.csv(';'))
        .text_is(out, &t.rows[row][t.key])
        .phrased(
            rng,
            vec![
                format!("Dans {file}, quel {kc} a la plus grande valeur dans la colonne {c} ? Écris seulement ce {kc} dans {out}."),
                format!("dans {file}, trouve la ligne où la colonne {c} est la plus grande et copie son {kc} dans {out}"),
                format!(
                    "Regarde la colonne {c} de {file} : à quel {kc} correspond le maximum ? \
                     Enregistre juste le {kc} dans {out}."
                ),
            ],
        )
        .reference(&format!(
            "{}best = max(rows, key=lambda r: float(r[{}]))\n{}",
            py_csv_rows(file, ';'),
            py(c),
            py_write(out, &format!("best[{}]", py(kc)))
        ));
    b.build()
}

fn words_in_text(rng: &mut Rng, names: &mut Names, out: &str) -> Instance {
    let file = names.plain(
        rng,
        &[
            "notes",
            "lettre",
            "journal",
            "recit",
            "poeme",
            "compte_rendu",
        ],
        "txt",
    );
    let (doc, word, count) = loop {
        let n = rng.range(5, 16) as usize;
        let doc: Vec<String> = (0..n)
            .map(|_| {
                let len = rng.range(4, 10) as usize;
                sentence(rng, words::FR_MOTS, len)
            })
            .collect();
        let word = *rng.pick(words::FR_MOTS);
        if word.chars().count() < 4 {
            continue;
        }
        let whole = doc
            .iter()
            .filter(|l| {
                l.split(|c: char| !c.is_alphabetic())
                    .any(|t| t.to_lowercase() == word)
            })
            .count();
        let exact = doc.iter().filter(|l| l.contains(word)).count();
        if whole == exact && whole > 0 && whole < doc.len() {
            break (doc, word, whole);
        }
    };
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "mots");
    b.input(&file, &lines(&doc))
        .number_is(out, count as f64, 0.0)
        .phrased(
            rng,
            vec![
                format!("Combien de lignes de {file} contiennent le mot « {word} » ? Écris le nombre dans {out}."),
                format!("compte les lignes de {file} où apparaît {word} -> {out}"),
                format!(
                    "Dans mon texte {file}, le mot {word} revient souvent. Compte les lignes qui \
                     le contiennent (une ligne compte une fois) et mets le nombre dans {out}."
                ),
            ],
        )
        .reference(&format!(
            "n = sum(1 for l in open({}, encoding='utf-8').read().splitlines() if {} in l)\n{}",
            py(&file),
            py(word),
            py_write(out, "str(n)")
        ));
    b.build()
}
