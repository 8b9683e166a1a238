// The stacked series' colours, shared by the chart (recharts, loaded on demand) and the page's
// legend, apart so the legend does not pull the chart in. Distinct in both themes; the table view
// carries the figures for anyone who cannot tell them apart.
export const SERIES_COLOURS = ["#4f7fd9", "#e0803a", "#3fa66b", "#b65fc4", "#d4a82c", "#8a8f99"];
