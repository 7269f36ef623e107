//! Which front end the debugger talks through: the terminal view, the line protocol, or JSON.

use inspect::protocol::{self, FrontEnd};

#[test]
fn the_front_end_is_json_when_asked_the_terminal_view_on_terminals_and_lines_otherwise() {
    assert_eq!(protocol::front_end(true, true, true), FrontEnd::Json);
    assert_eq!(protocol::front_end(true, false, false), FrontEnd::Json);
    assert_eq!(protocol::front_end(false, true, true), FrontEnd::Terminal);
    assert_eq!(protocol::front_end(false, false, true), FrontEnd::Lines);
    assert_eq!(protocol::front_end(false, true, false), FrontEnd::Lines);
}
