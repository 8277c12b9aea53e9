/** 16 px stroke icons for the sidebar (inline SVG: no icon font, nothing fetched). */

const paths: Record<string, string> = {
  automations: 'M4 4h5v5H4zM15 4h5v5h-5zM9.5 17.5h5v5h-5zM6.5 9v3.5h11V9M12 12.5v5',
  runs: 'M6 4l13 8-13 8z',
  keys: 'M14.5 3.5a6 6 0 1 1-4.9 9.5L3.5 19v2h3v-2h2v-2h2l1.4-1.4A6 6 0 0 1 14.5 3.5zM16.5 7.5h.01',
  secrets: 'M6 10V8a6 6 0 0 1 12 0v2M5 10h14v11H5zM12 14v3',
  members: 'M16 20v-1.5a4 4 0 0 0-4-4H7a4 4 0 0 0-4 4V20M9.5 11a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7zM21 20v-1.5a4 4 0 0 0-3-3.9M15.5 4.1a3.5 3.5 0 0 1 0 6.8',
  audit: 'M9 6h11M9 12h11M9 18h11M4 6h.01M4 12h.01M4 18h.01',
};

export function Icon({ name }: { name: keyof typeof paths | string }) {
  return (
    <svg
      width="16"
      height="16"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      <path d={paths[name] ?? ''} />
    </svg>
  );
}
