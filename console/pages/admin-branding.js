// Branding (API.md "System configuration" and the site configuration's
// `branding`): name, logo and colours, for the whole server (Admins) and
// for the current site (GOVERN). A save is applied to the console at
// once (js/brand.js): the title, the header and the colours change
// without a reload.
import { h, clear } from "../js/dom.js";
import { api } from "../js/api.js";
import { state, status } from "../js/ctx.js";
import { isAdmin, canGovern, tabNav, field, submitting } from "../js/admin.js";
import { setGlobalBranding, setSiteBranding, applyBranding, globalBranding, usableLogo } from "../js/brand.js";
import { t } from "../i18n/index.js";

const enc = encodeURIComponent;
const MAX_LOGO = 256 << 10;

function readDataURL(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(r.result);
    r.onerror = () => reject(r.error);
    r.readAsDataURL(file);
  });
}

// brandForm is one branding's form; save gets the branding to store
// (null: none).
function brandForm(id, heading, b, save) {
  b = b || {};
  // The stored logo is its own file (logoUrl): sent back as it is, the
  // API keeps it.
  let logo = b.logoUrl || b.logo || "";
  const title = h("input", { type: "text", maxlength: 100, value: b.title || "" });
  const primary = h("input", { type: "text", value: b.primaryColor || "", placeholder: "#1f4e79", pattern: "#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})" });
  const secondary = h("input", { type: "text", value: b.secondaryColor || "", placeholder: "#d4a017", pattern: "#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})" });
  const email = h("input", { type: "email", value: b.supportEmail || "" });
  const file = h("input", { type: "file", accept: "image/png,image/jpeg,image/svg+xml,image/webp,image/gif" });
  const preview = h("span.logo-preview");
  const showLogo = () => clear(preview, usableLogo(logo)
    ? h("img", { src: logo, alt: t("admin.branding.logoPreview"), height: 32 })
    : logo ? h("code", logo) : h("span.meta", t("admin.branding.noLogo")));
  showLogo();
  file.addEventListener("change", async () => {
    const f = file.files[0];
    if (!f) return;
    const url = await readDataURL(f);
    if (url.length > MAX_LOGO) { status(t("admin.branding.logoTooBig"), "error"); file.value = ""; return; }
    logo = url;
    showLogo();
  });
  const form = submitting(h("form.panel", { id, "aria-labelledby": id + "-title" },
    h("h2", { id: id + "-title" }, heading),
    field(id + "-name", t("admin.branding.name"), title),
    h("div.field", h("label", { for: id + "-logo" }, t("admin.branding.logo")), preview,
      h("div.inline", file, h("button.small", { type: "button", onclick: () => { logo = ""; file.value = ""; showLogo(); } }, t("admin.branding.removeLogo")))),
    field(id + "-primary", t("admin.branding.primary"), primary, t("admin.branding.colorHint")),
    field(id + "-secondary", t("admin.branding.secondary"), secondary, t("admin.branding.colorHint")),
    field(id + "-email", t("admin.branding.supportEmail"), email),
    h("div.actions", h("button.primary", { type: "submit" }, t("common.save")))), async () => {
    const out = {};
    if (title.value.trim()) out.title = title.value.trim();
    if (logo) out.logo = logo;
    if (primary.value.trim()) out.primaryColor = primary.value.trim();
    if (secondary.value.trim()) out.secondaryColor = secondary.value.trim();
    if (email.value.trim()) out.supportEmail = email.value.trim();
    await save(Object.keys(out).length ? out : null);
  });
  file.id = id + "-logo";
  return form;
}

export default {
  path: /^\/admin\/branding$/,
  async render(ctx, main) {
    if (!canGovern()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    const site = state.site;
    const forms = h("div.forms");
    const parts = [tabNav("#/admin/branding"), h("h1", t("admin.branding.title")), h("p.meta", t("admin.branding.intro")), forms];
    if (isAdmin()) {
      // As read at start: GET /system/configuration once per page load.
      forms.append(brandForm("brand-global", t("admin.branding.global"), globalBranding(), async (b) => {
        await api("PATCH", "/system/configuration", { body: { branding: b } });
        setGlobalBranding(b);
        applyBranding();
        status(t("admin.branding.saved"), "info");
      }));
    }
    const cfg = await api("GET", `/sites/${enc(site)}/configuration`);
    if (ctx.stale()) return;
    forms.append(brandForm("brand-site", t("admin.branding.site", { site }), cfg.branding, async (b) => {
      await api("PATCH", `/sites/${enc(site)}/configuration`, { body: { branding: b } });
      setSiteBranding(site, b);
      applyBranding();
      status(t("admin.branding.saved"), "info");
    }));
    clear(main, ...parts);
  },
};
