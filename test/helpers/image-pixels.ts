import type { Page } from 'playwright-core';

/** A rectangle of a page, in CSS px. */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * How far a JPEG step screenshot (quality 70) may round a flat colour, per channel: the mask's black
 * comes back at most this, white at least 255 minus this. Text or password dots are far from either.
 */
export const NEAR_BLACK = 24;

/** A decoded image: its size in pixels and the RGBA bytes of each rectangle asked for, in order. */
export interface ImageRegions {
  width: number;
  height: number;
  regions: Uint8Array[];
}

/**
 * Decode an image (`data:` URL of a PNG or JPEG) with Chromium's decoder on `page` (a canvas) and read
 * the RGBA bytes of `rects`. The rectangles are in CSS px of a page `cssWidth` wide (a screencast
 * frame may be encoded at another size than the page it shows); without it, in image pixels. Each
 * edge is rounded to the nearest pixel after scaling.
 */
export async function imageRegions(page: Page, src: string, rects: Rect[], cssWidth?: number): Promise<ImageRegions> {
  const out = await page.evaluate(
    async ({ src, rects, cssWidth }) => {
      const img = new Image();
      img.src = src;
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const g = canvas.getContext('2d')!;
      g.drawImage(img, 0, 0);
      const scale = img.naturalWidth / (cssWidth || img.naturalWidth);
      const regions = rects.map((r) => {
        const d = g.getImageData(Math.round(r.x * scale), Math.round(r.y * scale), Math.round(r.width * scale), Math.round(r.height * scale)).data;
        // Bytes as a binary string in chunks (a spread of a large array overflows the call stack).
        let s = '';
        for (let i = 0; i < d.length; i += 0x8000) s += String.fromCharCode(...d.subarray(i, i + 0x8000));
        return btoa(s);
      });
      return { width: img.naturalWidth, height: img.naturalHeight, regions };
    },
    { src, rects, cssWidth: cssWidth ?? 0 },
  );
  return { width: out.width, height: out.height, regions: out.regions.map((b) => new Uint8Array(Buffer.from(b, 'base64'))) };
}
