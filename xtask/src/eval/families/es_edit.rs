//! `es_edit`: in-place edits written in Spanish, of Spanish files: a setting changed in a
//! settings file, an item added to or removed from a shopping list, a price changed in a
//! `;`-separated price list. A second file with the same content stays as it is.

use super::text::{lines, py, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "es_edit",
    category: Category::Edit,
    language: "es",
    about: "in-place edits written in Spanish, of Spanish files: a setting changed, an item \
            added to or removed from a shopping list, a price changed in a `;`-separated list; \
            a second file with the same content stays",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    match rng.below(4) {
        0 => setting(rng, &mut names),
        1 | 2 => shopping(rng, &mut names),
        _ => price(rng, &mut names),
    }
}

fn setting(rng: &mut Rng, names: &mut Names) -> Instance {
    let file = names.plain(rng, words::ES_STEMS, "ini");
    let other = format!("{}_copia.ini", file.trim_end_matches(".ini"));
    names.take(&other);
    let count = rng.range(4, words::ES_AJUSTES.len() as i64) as usize;
    let picked = rng.sample(words::ES_AJUSTES, count);
    let values: Vec<(&str, &str)> = picked.iter().map(|(k, vs)| (*k, *rng.pick(vs))).collect();
    let k = rng.below(values.len());
    let (key, old) = values[k];
    let options = picked[k].1;
    let new = loop {
        let v = *rng.pick(options);
        if v != old {
            break v;
        }
    };
    let render = |vals: &[(&str, &str)]| {
        let mut out = vec!["[general]".to_string()];
        out.extend(vals.iter().map(|(k, v)| format!("{k} = {v}")));
        lines(&out)
    };
    let mut after = values.clone();
    after[k].1 = new;
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "ajuste");
    b.editable(&file, &render(&values))
        .input(&other, &render(&values))
        .text_is(&file, &render(&after))
        .phrased(
            rng,
            vec![
                format!("En {file}, cambia {key} de {old} a {new}. Deja las demás líneas como están."),
                format!("pon {key} = {new} en {file} (no toques {other})"),
                format!(
                    "¿Puedes actualizar {file}? Quiero que {key} sea {new} en vez de {old}. El \
                     resto del archivo no debe cambiar."
                ),
            ],
        )
        .reference(&format!(
            "ls = open({f}, encoding='utf-8').read().splitlines()\nls = [({p} + {n}) if l.startswith({p}) else l for l in ls]\nopen({f}, 'w', encoding='utf-8').write('\\n'.join(ls) + '\\n')\n",
            f = py(&file),
            p = py(&format!("{key} = ")),
            n = py(new)
        ));
    b.build()
}

fn shopping(rng: &mut Rng, names: &mut Names) -> Instance {
    let file = names.plain(rng, &["lista_compra", "compra", "super", "mercado"], "txt");
    let other = names.plain(rng, &["compra_anterior", "lista_vieja", "despensa"], "txt");
    let n = rng.range(3, 10) as usize;
    let picked: Vec<String> = rng
        .sample(words::ES_COMPRA, n + 2)
        .iter()
        .map(|s| s.to_string())
        .collect();
    let items = picked[..n].to_vec();
    let other_items = vec![picked[n + 1].clone(), items[0].clone()];
    let mut b;
    if rng.chance(50) {
        let extra = picked[n].clone();
        let mut after = items.clone();
        after.push(extra.clone());
        b = Builder::new(FAMILY.name, FAMILY.category, "anadir");
        b.text_is(&file, &lines(&after)).phrased(
            rng,
            vec![
                format!("Añade {extra} al final de mi lista de la compra {file}."),
                format!("agrega \"{extra}\" como última línea de {file}"),
                format!(
                    "Se me olvidó apuntar {extra}. Ponlo al final de {file}, sin cambiar lo demás."
                ),
            ],
        );
        b.reference(&format!(
            "with open({}, 'a', encoding='utf-8') as f:\n    f.write({} + '\\n')\n",
            py(&file),
            py(&extra)
        ));
    } else {
        let k = rng.below(n);
        let gone = items[k].clone();
        let mut after = items.clone();
        after.remove(k);
        b = Builder::new(FAMILY.name, FAMILY.category, "quitar");
        b.text_is(&file, &lines(&after)).phrased(
            rng,
            vec![
                format!("Quita {gone} de {file}."),
                format!("borra la línea \"{gone}\" de {file}, las demás en el mismo orden"),
                format!("Ya compré {gone}. Elimínalo de mi lista {file} y deja el resto igual."),
            ],
        );
        b.reference(&format!(
            "ls = open({f}, encoding='utf-8').read().splitlines()\nls.remove({g})\nopen({f}, 'w', encoding='utf-8').write('\\n'.join(ls) + '\\n')\n",
            f = py(&file),
            g = py(&gone)
        ));
    }
    b.editable(&file, &lines(&items))
        .input(&other, &lines(&other_items));
    b.build()
}

fn price(rng: &mut Rng, names: &mut Names) -> Instance {
    let file = names.plain(
        rng,
        &["precios", "tarifas", "lista_precios", "catalogo"],
        "csv",
    );
    let other = format!("{}_2023.csv", file.trim_end_matches(".csv"));
    names.take(&other);
    let n = rng.range(4, 10) as usize;
    let products = rng.sample(words::ES_PRODUCTOS, n);
    let prices: Vec<String> = (0..n)
        .map(|_| format!("{},{:02}", rng.range(0, 9), rng.range(0, 99)))
        .collect();
    let k = rng.below(n);
    let new = loop {
        let p = format!("{},{:02}", rng.range(0, 9), rng.range(0, 99));
        if p != prices[k] {
            break p;
        }
    };
    let header = *rng.pick(&["producto;precio", "articulo;precio", "producto;euros"]);
    let render = |ps: &[String]| {
        let mut out = vec![header.to_string()];
        out.extend(products.iter().zip(ps).map(|(p, v)| format!("{p};{v}")));
        lines(&out)
    };
    let mut after = prices.clone();
    after[k] = new.clone();
    let product = products[k];
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "precio");
    b.editable(&file, &render(&prices))
        .input(&other, &render(&prices))
        .text_is(&file, &render(&after))
        .phrased(
            rng,
            vec![
                format!("En {file}, el precio de {product} ahora es {new}. Cámbialo y deja las demás filas igual."),
                format!("actualiza {product} a {new} en {file}"),
                format!(
                    "Cambió el precio: {product} cuesta ahora {new}. Corrige esa línea en \
                     {file} (con coma decimal, como las demás) sin tocar el resto."
                ),
            ],
        )
        .reference(&format!(
            "ls = open({f}, encoding='utf-8').read().splitlines()\nls = [({p} + {n}) if l.startswith({p}) else l for l in ls]\nopen({f}, 'w', encoding='utf-8').write('\\n'.join(ls) + '\\n')\n",
            f = py(&file),
            p = py(&format!("{product};")),
            n = py(&new)
        ));
    b.build()
}
