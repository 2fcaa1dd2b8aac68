// Branding (API.md "System configuration", site configuration `branding`):
// the name, logo and colours of the console, the current site's own
// branding before the global one. Applied at once: the title, the header
// and the colours change without a reload when a page saves branding.
// Colours go in through a constructed style sheet, never inline styles
// (CSP), and only as #RRGGBB/#RGB (the API refuses anything else).
import { state } from "./ctx.js";

let global = null; // GET /system/configuration `branding`
const sheet = typeof CSSStyleSheet === "function" && "replaceSync" in CSSStyleSheet.prototype ? new CSSStyleSheet() : null;
if (sheet) document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];

const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;
// The dark scheme's background and link colour (app.css).
const DARK_BG = "#0d1117", DARK_LINK = "#79c0ff";

export function setGlobalBranding(b) { global = b || null; }

// siteBranding replaces the current site's branding (after a save).
export function setSiteBranding(siteId, b) {
  const s = state.sites.find((x) => x.siteId === siteId);
  if (s) s.branding = b || undefined;
}

// current is the branding in force: the site's, else the global one.
export function current() {
  const s = state.sites.find((x) => x.siteId === state.site);
  const site = s && s.branding;
  const g = global || {};
  if (!site) return g;
  // A site's logo (its own file, logoUrl, or an inline one) before the global one.
  const logos = site.logoUrl || site.logo ? site : g;
  return {
    title: site.title || g.title, logoUrl: logos.logoUrl, logo: logos.logo,
    primaryColor: site.primaryColor || g.primaryColor, secondaryColor: site.secondaryColor || g.secondaryColor,
    supportEmail: site.supportEmail || g.supportEmail,
  };
}

export function brandName() { return current().title || "Quire"; }

// A logo the console can show: the server's logo file (logoUrl,
// /branding/logo?v= or /sites/{siteId}/branding/logo?v=, cached for good
// by the browser), or an inline data:image/ URL (a logo just chosen on
// the branding page). A logo at an http(s) URL is not loaded (img-src
// 'self' data: blob:, air-gapped).
const logoFile = /^\/(branding|sites\/[^/?#]+\/branding)\/logo\?v=[A-Za-z0-9_-]+$/;
export function usableLogo(l) { return logoFile.test(l || "") || /^data:image\//.test(l || ""); }
export function brandLogo() {
  const b = current();
  for (const l of [b.logoUrl, b.logo]) if (usableLogo(l)) return l;
  return "favicon.svg";
}

// globalBranding is the global branding as read at start (GET
// /system/configuration), for the branding page: no second request.
export function globalBranding() { return global; }

function rgb(c) {
  let x = c.slice(1);
  if (x.length === 3) x = x.replace(/./g, "$&$&");
  return [0, 2, 4].map((i) => parseInt(x.slice(i, i + 2), 16) / 255);
}

function luminance(c) {
  const [r, g, b] = rgb(c).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a, b) {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

// apply sets the page title, the header's name and logo and the colours.
// The text on the primary colour is black or white, whichever reads
// better; links keep the default colour when the primary one is too
// light to read on white.
export function applyBranding() {
  const b = current();
  document.title = brandName();
  const name = document.getElementById("brand-name");
  if (name) name.textContent = brandName();
  const logo = document.getElementById("brand-logo");
  if (logo) logo.setAttribute("src", brandLogo());
  if (!sheet) return;
  const rules = [];
  let dark = "";
  if (hex.test(b.primaryColor || "")) {
    const p = b.primaryColor;
    const fg = contrast(p, "#ffffff") >= contrast(p, "#000000") ? "#fff" : "#000";
    rules.push(`--accent: ${p}; --accent-fg: ${fg};`);
    if (contrast(p, "#ffffff") >= 4.5) rules.push(`--link: ${p};`);
    // In the dark scheme links keep the primary colour only where it
    // reads on the dark background, else the scheme's own.
    dark = `@media (prefers-color-scheme: dark) { :root { --link: ${contrast(p, DARK_BG) >= 4.5 ? p : DARK_LINK}; } }`;
  }
  if (hex.test(b.secondaryColor || "")) rules.push(`--accent2: ${b.secondaryColor};`);
  sheet.replaceSync((rules.length ? `:root { ${rules.join(" ")} }` : "") + dark);
}
