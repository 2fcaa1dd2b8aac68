// The console's strings: one module per language, each a flat map of key
// to text with {name} placeholders. The language comes from the switch
// (remembered in localStorage: a preference, never a credential), else
// from navigator.languages, else English.
import en from "./en.js";
import de from "./de.js";

export const languages = { en, de };
export const languageNames = { en: "English", de: "Deutsch" };

let current = "en";

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
  document.documentElement.lang = current;
  if (remember) {
    try { localStorage.setItem("quire.lang", current); } catch (_) { /* storage off */ }
  }
}

export function lang() { return current; }

// t looks a key up in the current language (English when missing) and
// fills {placeholders} from vars.
export function t(key, vars) {
  const s = languages[current][key] ?? en[key] ?? key;
  return vars ? s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m)) : s;
}
