import type { BaseCheckpointSaver } from '@langchain/langgraph'
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph'
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt'
import type { StructuredToolInterface } from '@langchain/core/tools'
import type { ScriptedChatModel } from './scripted-chat-model'

/** The usual agent loop: the model, then LangGraph's ToolNode for its tool calls, until it answers without any. */
export function agentGraph(model: ScriptedChatModel, tools: StructuredToolInterface[], checkpointer?: BaseCheckpointSaver) {
  const bound = model.bindTools(tools)
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile(checkpointer ? { checkpointer } : {})
}
