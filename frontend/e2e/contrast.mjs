// Colour checks for the e2e run: what a user sees in Chromium's computed
// styles, in light and dark.

/** The WCAG contrast ratio of two computed colours ("rgb(r, g, b)"). */
export function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/[\d.]+/g).slice(0, 3).map((v) => {
      const s = Number(v) / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * Hovers the button in light and dark and returns, per scheme, its
 * computed text and background colours and their contrast ratio (issue 21
 * bug 2: a primary button on hover was white on #eef0f6, dark on dark).
 */
export async function hoverContrast(page, locator) {
  const out = {};
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await locator.hover();
    const { fg, bg } = await locator.evaluate((el) => {
      const s = getComputedStyle(el);
      return { fg: s.color, bg: s.backgroundColor };
    });
    out[scheme] = { fg, bg, ratio: contrast(fg, bg) };
  }
  await page.mouse.move(0, 0);
  await page.emulateMedia({ colorScheme: null });
  return out;
}
