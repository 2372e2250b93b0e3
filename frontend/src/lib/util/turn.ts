/**
 * A decision's turn the way its user counts it: "turn 3" answers the
 * session's third prompt (user_turn). A decision whose exchanges did not
 * count the prompts is named by its first exchange, "exchange 7" (turn:
 * agent responses, the tool loop's iterations included); a document's has
 * neither ("").
 */
export function turnLabel(d: { user_turn?: number; turn?: number }): string {
  if (d.user_turn) return `turn ${d.user_turn}`;
  if (d.turn) return `exchange ${d.turn}`;
  return '';
}
