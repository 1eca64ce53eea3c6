// Every LLM on /v1/responses, with its official SDK: see matrix.ts.
import { matrixFor } from "./matrix";

matrixFor("/v1/responses");
