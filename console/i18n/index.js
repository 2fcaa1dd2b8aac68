// The console's strings: one module per language, each a flat map of key
// to text with {name} placeholders. The language comes from the switch
// (remembered in localStorage: a preference, never a credential), else
// from navigator.languages, else English.
//
// Plurals: t(key, {n}) with a number n looks up key.<category> first, the
// category of n in the language (Intl.PluralRules: "one", "other", and
// French's "many"), then key.other, then key. Numbers among the vars are
// written in the language's format (Intl.NumberFormat: 1,234 / 1.234 /
// 1 234).
import en from "./en.js";
import de from "./de.js";
import fr from "./fr.js";

export const languages = { en, de, fr };
export const languageNames = { en: "English", de: "Deutsch", fr: "Français" };

let current = "en";
let rules = new Intl.PluralRules("en");
let numbers = new Intl.NumberFormat("en");

export function pickLanguage() {
  let saved = null;
  try { saved = localStorage.getItem("quire.lang"); } catch (_) { /* storage off */ }
  if (saved && languages[saved]) return saved;
  for (const l of navigator.languages || [navigator.language || "en"]) {
    const base = String(l).toLowerCase().split("-")[0];
    if (languages[base]) return base;
  }
  return "en";
}

export function setLanguage(lang, remember) {
  current = languages[lang] ? lang : "en";
  rules = new Intl.PluralRules(current);
  numbers = new Intl.NumberFormat(current);
  document.documentElement.lang = current;
  if (remember) {
    try { localStorage.setItem("quire.lang", current); } catch (_) { /* storage off */ }
  }
}

export function lang() { return current; }

// num writes a number in the language's format; opts as Intl.NumberFormat's.
export function num(n, opts) {
  return opts ? new Intl.NumberFormat(current, opts).format(n) : numbers.format(n);
}

function lookup(key, n) {
  const table = languages[current];
  const keys = typeof n === "number" ? [key + "." + rules.select(n), key + ".other", key] : [key];
  for (const k of keys) if (Object.hasOwn(table, k)) return table[k];
  const enKeys = typeof n === "number" ? [key + "." + new Intl.PluralRules("en").select(n), key + ".other", key] : [key];
  for (const k of enKeys) if (Object.hasOwn(en, k)) return en[k];
  return key;
}

// t looks a key up in the current language (English when missing) and
// fills {placeholders} from vars.
export function t(key, vars) {
  const s = lookup(key, vars ? vars.n : undefined);
  if (!vars) return s;
  return s.replace(/\{(\w+)\}/g, (m, k) => {
    if (!(k in vars)) return m;
    const v = vars[k];
    return typeof v === "number" ? numbers.format(v) : String(v);
  });
}

// has tells whether the language (or English) has a string for key.
export function has(key) {
  return Object.hasOwn(languages[current], key) || Object.hasOwn(en, key);
}
