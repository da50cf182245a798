//! Word lists the generators draw names and data from: file stems, people, places, things,
//! and a few in French and Spanish. Lower case, ASCII where the language allows.

/// Stems of data files a user keeps.
pub(crate) const DATA_STEMS: &[&str] = &[
    "inventory",
    "orders",
    "expenses",
    "budget",
    "grades",
    "members",
    "shipments",
    "visits",
    "rentals",
    "payroll",
    "plants",
    "recipes",
    "trips",
    "tickets",
    "stock",
    "sales",
    "scores",
    "garden",
    "club",
    "donations",
    "invoices",
    "deliveries",
    "fleet",
    "bookings",
    "harvest",
    "workshop",
    "subscriptions",
    "volunteers",
    "rooms",
    "catalog",
    "survey",
    "pantry",
    "results",
    "ledger",
    "roster",
    "readings",
    "entries",
    "records",
    "purchases",
    "export",
];

/// Stems of files a task asks the run to write.
pub(crate) const OUT_STEMS: &[&str] = &[
    "answer", "result", "out", "total", "count", "summary", "report", "value", "findings",
    "number", "output", "reply", "figure", "tally", "stats", "note", "final", "check",
];

/// Stems of text documents.
pub(crate) const DOC_STEMS: &[&str] = &[
    "notes",
    "letter",
    "draft",
    "memo",
    "minutes",
    "story",
    "journal",
    "readme",
    "agenda",
    "essay",
    "poem",
    "speech",
    "review",
    "todo",
    "plan",
    "diary",
    "blurb",
    "announcement",
];

/// Stems of log files.
pub(crate) const LOG_STEMS: &[&str] = &[
    "server", "app", "access", "backend", "worker", "api", "gateway", "cron", "sync", "billing",
    "auth", "web", "proxy", "jobs",
];

/// Folder names a user makes.
pub(crate) const FOLDERS: &[&str] = &[
    "archive",
    "old",
    "backup",
    "done",
    "reports",
    "attic",
    "keep",
    "processed",
    "2024",
    "sorted",
    "stash",
    "saved",
    "finished",
    "outbox",
];

/// First names.
pub(crate) const PEOPLE: &[&str] = &[
    "alice", "bruno", "chen", "dana", "emeka", "fatima", "goran", "hana", "ivan", "jules", "kofi",
    "lena", "mateo", "nadia", "oskar", "priya", "quinn", "rosa", "sami", "tomas", "uma", "viktor",
    "wen", "yara", "zoe", "amir", "bea", "carlos", "dmitri", "elif", "farah", "gus", "ines",
    "jonas", "keiko", "luis", "mira", "nils", "olga", "pavel",
];

/// Cities.
pub(crate) const CITIES: &[&str] = &[
    "lisbon", "oslo", "quito", "accra", "hanoi", "perth", "lima", "riga", "turin", "cork",
    "bergen", "porto", "malmo", "graz", "leeds", "kyoto", "cusco", "dakar", "split", "tartu",
    "ghent", "bilbao", "lyon", "krakow", "tampere", "aarhus", "basel", "brno",
];

/// Fruit and vegetables (product names).
pub(crate) const PRODUCE: &[&str] = &[
    "apple", "pear", "plum", "kiwi", "mango", "fig", "lime", "melon", "grape", "peach", "cherry",
    "banana", "lemon", "apricot", "papaya", "guava", "carrot", "leek", "onion", "potato",
    "cabbage", "radish", "turnip", "celery", "spinach", "pumpkin", "quince", "date",
];

/// Short book titles.
pub(crate) const TITLES: &[&str] = &[
    "dune",
    "emma",
    "ulysses",
    "beloved",
    "rebecca",
    "persuasion",
    "middlemarch",
    "siddhartha",
    "kindred",
    "solaris",
    "frankenstein",
    "dracula",
    "walden",
    "candide",
    "utopia",
    "ivanhoe",
    "lolita",
    "matilda",
    "heidi",
    "shogun",
    "beowulf",
    "hamlet",
    "othello",
    "carmilla",
];

/// Plain words for sentences.
pub(crate) const WORDS: &[&str] = &[
    "the", "a", "river", "quiet", "morning", "light", "over", "hills", "and", "we", "walked",
    "slowly", "to", "old", "bridge", "where", "birds", "sang", "in", "tall", "grass", "near",
    "town", "with", "bread", "cheese", "for", "lunch", "then", "rain", "came", "soft", "warm",
    "under", "trees", "green", "stone", "house", "window", "open", "cold", "tea", "letter", "from",
    "friend", "far", "away", "road", "long", "night", "bright", "stars",
];

/// Colours (values in lists and configs).
pub(crate) const COLOURS: &[&str] = &[
    "red", "blue", "green", "amber", "violet", "teal", "orange", "grey", "olive", "navy",
    "crimson", "ivory",
];

/// Verbs for function names.
pub(crate) const VERBS: &[&str] = &[
    "load", "parse", "compute", "fetch", "build", "format", "check", "render", "merge", "collect",
    "count", "clean", "scale", "convert", "split", "score",
];

/// Nouns for function and variable names.
pub(crate) const NOUNS: &[&str] = &[
    "items", "prices", "orders", "users", "rows", "totals", "names", "records", "scores", "labels",
    "entries", "values", "tags", "points", "lines", "events",
];

/// Module stems for code files.
pub(crate) const MODULES: &[&str] = &[
    "util",
    "helpers",
    "billing",
    "pricing",
    "inventory",
    "report",
    "stats",
    "shop",
    "tools",
    "ledger",
    "cart",
    "grading",
    "schedule",
    "payroll",
    "metrics",
    "weather",
];

/// Groceries for shopping lists.
pub(crate) const GROCERIES: &[&str] = &[
    "milk",
    "bread",
    "eggs",
    "butter",
    "rice",
    "pasta",
    "coffee",
    "tea",
    "apples",
    "onions",
    "tomatoes",
    "cheese",
    "yogurt",
    "flour",
    "sugar",
    "oats",
    "beans",
    "honey",
    "salt",
    "lentils",
    "soap",
    "oranges",
    "carrots",
    "olive oil",
];

/// French product names (no accents in some, as people type them).
pub(crate) const FR_PRODUITS: &[&str] = &[
    "pomme",
    "poire",
    "prune",
    "cerise",
    "fraise",
    "abricot",
    "figue",
    "raisin",
    "melon",
    "pêche",
    "châtaigne",
    "noix",
    "citron",
    "framboise",
    "myrtille",
    "mirabelle",
    "coing",
    "clémentine",
];

/// French cities.
pub(crate) const FR_VILLES: &[&str] = &[
    "lyon", "nantes", "lille", "rennes", "nice", "dijon", "brest", "metz", "tours", "caen",
    "reims", "annecy", "rouen", "nîmes",
];

/// French first names.
pub(crate) const FR_PRENOMS: &[&str] = &[
    "amélie", "bastien", "chloé", "damien", "élodie", "fabrice", "gaëlle", "hugo", "inès",
    "julien", "léa", "mathis", "noémie", "océane", "pierre", "romain", "sophie", "théo",
];

/// French plain words for sentences.
pub(crate) const FR_MOTS: &[&str] = &[
    "le",
    "la",
    "un",
    "une",
    "chat",
    "dort",
    "sur",
    "le",
    "toit",
    "pendant",
    "que",
    "la",
    "pluie",
    "tombe",
    "doucement",
    "nous",
    "marchons",
    "vers",
    "village",
    "avec",
    "du",
    "pain",
    "et",
    "fromage",
    "soleil",
    "revient",
    "enfin",
    "jardin",
    "vert",
    "maison",
    "vieille",
    "rivière",
    "calme",
    "matin",
    "froid",
    "soir",
];

/// Spanish groceries.
pub(crate) const ES_COMPRA: &[&str] = &[
    "leche",
    "pan",
    "huevos",
    "arroz",
    "tomates",
    "aceite",
    "queso",
    "manzanas",
    "cebollas",
    "lentejas",
    "café",
    "azúcar",
    "harina",
    "yogur",
    "jamón",
    "naranjas",
    "patatas",
    "sal",
    "garbanzos",
    "atún",
];

/// Spanish product names for price lists.
pub(crate) const ES_PRODUCTOS: &[&str] = &[
    "manzana", "pera", "plátano", "naranja", "limón", "uva", "melón", "sandía", "fresa", "cereza",
    "piña", "mango", "higo", "ciruela", "kiwi", "aguacate",
];

/// Spanish setting names and their possible values.
pub(crate) const ES_AJUSTES: &[(&str, &[&str])] = &[
    ("idioma", &["es", "en", "fr", "ca", "pt"]),
    ("tema", &["claro", "oscuro", "azul", "verde"]),
    (
        "zona_horaria",
        &["Europe/Madrid", "America/Lima", "America/Bogota", "UTC"],
    ),
    ("moneda", &["EUR", "USD", "MXN", "COP", "ARS"]),
    ("notificaciones", &["si", "no"]),
    ("tamano_letra", &["12", "14", "16", "18", "20"]),
    (
        "copias_de_seguridad",
        &["diarias", "semanales", "mensuales"],
    ),
    (
        "usuario",
        &["maria", "jorge", "lucia", "pablo", "carmen", "diego"],
    ),
];

/// Spanish folder and file stems.
pub(crate) const ES_STEMS: &[&str] = &[
    "ajustes",
    "configuracion",
    "preferencias",
    "opciones",
    "perfil",
    "cuenta",
];
