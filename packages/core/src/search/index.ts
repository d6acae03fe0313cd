// What the rest of core (and `yarn bench:search`) uses; tokenizing, stemming, field
// extraction and the tuning constants stay inside this folder.
export { createToolSearchTool, NO_MATCH_THRESHOLD, TOOL_SEARCH_NAME, type ToolSearchData, type ToolSearchToolOptions } from './create-tool-search-tool'
export type { SearchDocument } from './search-document'
export type { SummaryStyle } from './summarize-tools'
export { type FieldWeights, type SearchHit, type SearchOptions, ToolSearchIndex, type ToolSearchIndexOptions } from './tool-search-index'
