import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';

/**
 * Recording through the studio's canvas in the web app, as a person does it: the web app's page shows
 * the remote page on a canvas, and the test clicks and types there with the mouse and keyboard.
 *
 * Where is the element a person would click? The test cannot look inside the remote browser, so it
 * keeps a twin: the same site opened in the test's own Chromium at the remote page's viewport, sent
 * the same clicks and keys. The element's box in the twin is where it is on the remote page (same
 * Chromium, same launch flags, same viewport, same input). The twin only finds places; every step is
 * captured from the remote page through the canvas.
 */

export interface NewAutomation {
  name: string;
  site: string;
  task: string;
}

export interface Point {
  x: number;
  y: number;
}

/** The web app signed in as a new owner: a page on the hosted service. */
export async function signUpInWebApp(browser: Browser, baseURL: string, email: string): Promise<{ context: BrowserContext; page: Page }> {
  // Wide enough that the remote page is wide too (the studio sizes it from the canvas's card).
  const context = await browser.newContext({ viewport: { width: 1800, height: 1200 }, baseURL });
  context.setDefaultTimeout(60_000);
  const page = await context.newPage();
  await page.goto('/signup');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByLabel('Organization name').fill('Corpus Inc');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.waitForURL('**/automations');
  return { context, page };
}

export class StudioCanvas {
  private constructor(
    readonly page: Page,
    readonly id: string,
    readonly twin: Page,
    private readonly canvas: Locator,
    readonly viewport: { width: number; height: number },
  ) {}

  /** Creates the automation in the web app, starts recording on its Capture tab, opens the twin. */
  static async open(page: Page, browser: Browser, automation: NewAutomation): Promise<StudioCanvas> {
    await page.goto('/automations/new');
    await page.getByLabel('Name').fill(automation.name);
    await page.getByLabel('Site').fill(automation.site);
    await page.getByLabel('Task').fill(automation.task);
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.waitForURL('**/automations/*/capture');
    const id = /\/automations\/([^/]+)\/capture/.exec(page.url())![1]!;
    await page.getByRole('button', { name: 'Start recording' }).click();
    await page.locator('.studio-overlay').waitFor({ state: 'detached' });
    await page.getByTestId('op-list').getByText(automation.site).waitFor();
    const canvas = page.getByLabel('Remote browser');
    await canvas.scrollIntoViewIfNeeded();
    const viewport = { width: Number(await canvas.getAttribute('width')), height: Number(await canvas.getAttribute('height')) };
    const twinContext = await browser.newContext({ viewport });
    twinContext.setDefaultTimeout(30_000);
    const twin = await twinContext.newPage();
    await twin.goto(automation.site, { waitUntil: 'load' });
    const studio = new StudioCanvas(page, id, twin, canvas, viewport);
    await studio.loaded(automation.site);
    return studio;
  }

  /** The remote page at `address` has fired its load event. */
  loaded(address: string): Promise<void> {
    return this.page.locator('[data-testid="studio-url"][data-state="complete"]', { hasText: address }).waitFor();
  }

  get rows(): Locator {
    return this.page.getByTestId('op-list').locator('.op-row');
  }

  /** The op list shows at least `n` steps (the navigate step included). */
  async steps(n: number): Promise<void> {
    await this.rows.nth(n - 1).waitFor();
  }

  /** Where `target` (a locator in the twin) is: its centre, or `offset` from its top-left corner. */
  async where(target: (twin: Page) => Locator, offset?: Point): Promise<Point> {
    const loc = target(this.twin);
    await loc.waitFor({ state: 'visible' });
    const b = (await loc.boundingBox())!;
    if (b.y + b.height > this.viewport.height || b.x + b.width > this.viewport.width) {
      throw new Error(`the element is outside the remote page's ${this.viewport.width}x${this.viewport.height} viewport: ${JSON.stringify(b)}`);
    }
    return offset ? { x: b.x + offset.x, y: b.y + offset.y } : { x: b.x + b.width / 2, y: b.y + b.height / 2 };
  }

  private async onCanvas(p: Point): Promise<Point> {
    const b = (await this.canvas.boundingBox())!;
    const scale = b.width / this.viewport.width;
    return { x: b.x + p.x * scale, y: b.y + p.y * scale };
  }

  /** A click on the remote page where `target` is (and the same click in the twin). */
  async click(target: ((twin: Page) => Locator) | Point, offset?: Point): Promise<void> {
    const p = typeof target === 'function' ? await this.where(target, offset) : target;
    const q = await this.onCanvas(p);
    await this.page.mouse.click(q.x, q.y);
    await this.twin.mouse.click(p.x, p.y);
  }

  /** Typing on the keyboard (the canvas has the focus after a click on it). */
  async type(text: string): Promise<void> {
    await this.page.keyboard.type(text);
    await this.twin.keyboard.type(text);
  }

  async press(key: string): Promise<void> {
    await this.page.keyboard.press(key);
    await this.twin.keyboard.press(key);
  }

  /**
   * Scrolls the page down `dy` CSS px with the mouse wheel over the canvas (and in the twin), then waits
   * until both have stopped moving: the twin's scroll position, and the remote page's frames on the
   * canvas (two equal in a row, after one that differs from before the wheel).
   */
  async scroll(dy: number): Promise<void> {
    const before = await this.canvas.screenshot();
    const centre = { x: this.viewport.width / 2, y: this.viewport.height / 2 };
    const q = await this.onCanvas(centre);
    await this.page.mouse.move(q.x, q.y);
    await this.page.mouse.wheel(0, dy);
    await this.twin.mouse.move(centre.x, centre.y);
    await this.twin.mouse.wheel(0, dy);
    let was = -1;
    for (let i = 0; ; i++) {
      const y = await this.twin.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => r(window.scrollY))));
      if (y > 0 && y === was) break;
      if (i > 500) throw new Error('the twin page did not scroll');
      was = y;
    }
    // Three equal frames in a row, the first of them new: the remote page has stopped moving.
    let last = before;
    let same = 0;
    for (let i = 0; ; i++) {
      const now = await this.canvas.screenshot();
      same = now.equals(last) && !now.equals(before) ? same + 1 : 0;
      if (same >= 2) break;
      if (i > 500) throw new Error('the remote page did not scroll');
      last = now;
    }
  }

  /** Extract: names the output field, arms the picker, clicks the element on the remote page. */
  async extract(field: string, target: (twin: Page) => Locator, offset?: Point): Promise<void> {
    await this.extractAt(field, await this.where(target, offset));
  }

  /**
   * Extract at a point of the remote page: names the output field, sets the List toggle (`list`: every
   * item like the picked one), arms the picker, moves the pointer there (the pick is outlined), presses
   * `keys` (ArrowUp: the parent...), and clicks at the same point.
   */
  async extractAt(field: string, p: Point, options: { list?: boolean; keys?: string[] } = {}): Promise<void> {
    await this.arm(field, options.list === true);
    const q = await this.onCanvas(p);
    await this.page.mouse.move(q.x, q.y);
    for (const key of options.keys ?? []) await this.page.keyboard.press(key);
    // The picking click (and the keys) never reach the page (the picker swallows them): not sent to the twin.
    await this.page.mouse.click(q.x, q.y);
    await this.page.getByTestId('op-list').getByText(`output.${field}`).waitFor();
  }

  /** Names the output field, sets the List toggle and arms extract mode (the canvas has the focus then). */
  async arm(field: string, list = false): Promise<void> {
    await this.page.getByLabel('Output field').fill(field);
    await this.page.getByLabel('List', { exact: true }).setChecked(list);
    await this.page.getByRole('button', { name: 'Extract' }).click();
    await this.page.getByRole('button', { name: `Click the element for "${field}"` }).waitFor();
  }

  /** The authoring session as the service stores it (the page's own session cookie). */
  async session(): Promise<any> {
    const res = await this.page.request.get(`/api/authoring/${this.id}`);
    if (res.status() !== 200) throw new Error(`GET /api/authoring/${this.id}: ${res.status()}`);
    return (await res.json()).session;
  }

  /** Step `step` (1-based, as the list numbers it) becomes an input slot named `slot`. */
  async markInput(step: number, slot: string): Promise<void> {
    await this.page.getByLabel(`Value of step ${step}`).selectOption('input');
    const name = this.page.getByLabel(`Slot of step ${step}`);
    await name.waitFor();
    if ((await name.inputValue()) !== slot) {
      await name.fill(slot);
      await name.blur();
    }
  }

  /**
   * Step `step` (1-based) becomes optional: the step list's Optional toggle, pressed as a person does;
   * waits until the page shows it pressed and the service has stored it.
   */
  async markOptional(step: number): Promise<void> {
    const toggle = this.page.getByRole('button', { name: `Step ${step} optional` });
    if ((await toggle.getAttribute('aria-pressed')) !== 'true') await toggle.click();
    // The page shows the toggle pressed once the service has answered the PATCH with the step optional.
    await this.page.locator(`[aria-label="Step ${step} optional"][aria-pressed="true"]`).waitFor();
    const stored = (await this.session()).captured_ops[step - 1];
    if (stored?.optional !== true) throw new Error(`step ${step} was not stored optional: ${JSON.stringify(stored)}`);
  }

  /** Stops recording and publishes from the studio; mints a live key on the Keys tab. */
  async publish(): Promise<{ key: string; automation: any }> {
    await this.page.getByRole('button', { name: 'Stop recording' }).click();
    await this.page.getByText('Recording stopped').waitFor();
    await this.page.getByRole('button', { name: 'Publish' }).click();
    await this.page.getByText('Published: version').waitFor();
    const automation = (await (await this.page.request.get(`/api/automations/${this.id}`)).json()).automation;
    await this.page.goto(`/automations/${this.id}/keys`);
    await this.page.getByRole('button', { name: 'Create key' }).click();
    const key = (await this.page.getByTestId('minted-secret').textContent())!.trim();
    return { key, automation };
  }

  async close(): Promise<void> {
    await this.twin.context().close();
  }
}
